#[cfg(test)]
mod tests {
    use crate::pipeline::Pipeline;
    use eqm_compile::analysis::Analysis;
    use eqm_flatten::Sources;

    /// The analysis of `text` (events extracted), and the texts of its equations.
    fn check(text: &str) -> (Analysis, Vec<String>) {
        let mut session = Sources::new();
        session.add_file("events.eqm", text.to_string());
        let analysis = session
            .analyze(None, &eqm_flatten::Options::default(), true)
            .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
        let equations = analysis
            .dae
            .equations
            .iter()
            .map(|e| analysis.dae.equation_text(e))
            .collect();
        (analysis, equations)
    }

    #[test]
    fn relations_become_frozen_variables_and_sign_shares_one_surface() {
        let (a, eqs) = check(
            "model M
               parameter Real q = 0.4;
               Real v(start = 0, fixed = true);
               Real y(start = 0, fixed = true);
             equation
               der(y) = if v > q then 1 else 0;
               der(v) = -sign(v - q) - y;
             end M;",
        );
        let surfaces = &a.dae.stage.events.surfaces;
        assert_eq!(surfaces.len(), 1, "{surfaces:?}");
        assert_eq!(surfaces[0].text, "v - q > 0");
        assert_eq!(surfaces[0].relations.len(), 2, "v > q and v < q read one surface");
        assert!(eqs.iter().all(|e| !e.contains('>') && !e.contains("sign")), "{eqs:?}");
    }

    #[test]
    fn no_event_keeps_relations_live_but_still_rewrites_event_operators() {
        let (a, eqs) = check(
            "model M
               Real x(start = 0, fixed = true);
               Real y;
               Real z;
             equation
               der(x) = 1;
               y = if noEvent(initial() or x > 0.5) then 1 else 0;
               z = if x > 0.5 then 1 else 0;
             end M;",
        );
        assert!(
            eqs.iter().any(|e| e.contains("noEvent($initial or x > 0.5)")),
            "{eqs:?}"
        );
        assert_eq!(a.dae.stage.events.surfaces.len(), 1);
        assert!(a.dae.stage.events.initial.is_some());
    }

    #[test]
    fn relations_between_parameters_and_discrete_variables_stay_relations() {
        let (a, eqs) = check(
            "model M
               parameter Real k = 2;
               discrete Real u(start = 1);
               Real x(start = 0, fixed = true);
             equation
               der(x) = if u > k then 1 else abs(k) + max(u, k);
               when x > 1 then
                 u = 3;
               end when;
             end M;",
        );
        // Only the when-condition's relation on the state is a surface.
        assert_eq!(a.dae.stage.events.surfaces.len(), 1, "{:?}", a.dae.stage.events);
        assert_eq!(a.dae.stage.events.surfaces[0].text, "x - 1 > 0");
        assert!(
            eqs.iter().any(|e| e.contains("u > k") && e.contains("abs(k)")),
            "{eqs:?}"
        );
    }

    #[test]
    fn sample_edge_and_change_become_clocks_and_previous_values() {
        let (a, _) = check(
            "model M
               Real x(start = 0, fixed = true);
               discrete Real n(start = 0);
               discrete Real m(start = 0);
             equation
               der(x) = 1;
               when sample(0, 0.5) then
                 n = pre(n) + 1;
               end when;
               when edge(x > 0.3) or change(n) then
                 m = pre(m) + 1;
               end when;
             end M;",
        );
        let events = &a.dae.stage.events;
        assert_eq!(events.samples.len(), 1);
        // `edge(x > 0.3)`, `change(n)`, and `pre(n)`, `pre(m)` of the discrete variables.
        assert_eq!(events.previous.len(), 4);
        assert_eq!(events.surfaces.len(), 1);
        assert_eq!(events.when_conditions.len(), 2);
    }
}
