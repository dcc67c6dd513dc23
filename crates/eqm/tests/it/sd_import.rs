//! System-dynamics files run through the library as every front end runs them: imported by
//! their extension, compiled and simulated with the file's own specs, the results under the
//! file's names. Checked against the Euler iterates computed by hand (closed forms of the
//! recurrences), not against earlier output: `NPV` against Vensim's defining equations
//! iterated here, `STDDEV` against the population deviation, the random functions against
//! their documented generator run draw by draw and against their distributions, a conveyor
//! against its belt of slats stepped by hand.

use eqm::{ModelOptions, RunSettings, Session, SimulationResult};

/// The run of a file with its own settings.
fn attempt(name: &str, text: &str) -> Result<SimulationResult, eqm::RunError> {
    let mut session = Session::with_source_bytes(vec![(name.to_string(), text.as_bytes().to_vec())], &[], None);
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    model.simulate(&RunSettings::default())
}

fn run(name: &str, text: &str) -> SimulationResult {
    attempt(name, text).expect("the model runs")
}

/// The message of the failure of a run of a file that compiles.
fn run_error(name: &str, text: &str) -> String {
    match attempt(name, text) {
        Ok(_) => panic!("{name} ran"),
        Err(error) => format!("{error:?}"),
    }
}

fn xmile(specs: &str, variables: &str) -> String {
    format!(
        "<xmile xmlns=\"http://docs.oasis-open.org/xmile/ns/XMILE/v1.0\" version=\"1.0\">\n\
         <sim_specs {specs}</sim_specs>\n<model><variables>\n{variables}\n</variables></model>\n</xmile>\n"
    )
}

/// The teacup cools by Euler's method with DT = 0.125 exactly as the recurrence
/// `T(k+1) = T(k) - DT*(T(k) - 70)/10` says: `T(k) = 70 + 110*(1 - DT/10)^k`; the heat loss
/// of each row is computed from that row's temperature.
#[test]
fn the_teacup_cools_by_the_euler_recurrence_under_its_own_names() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>30</stop><dt>0.125</dt>",
        "<stock name=\"Teacup Temperature\"><eqn>180</eqn><outflow>Heat_Loss_to_Room</outflow></stock>\n\
         <flow name=\"Heat Loss to Room\"><eqn>(Teacup_Temperature - Room_Temperature)/Characteristic_Time</eqn></flow>\n\
         <aux name=\"Room Temperature\"><eqn>70</eqn></aux>\n\
         <aux name=\"Characteristic Time\"><eqn>10</eqn></aux>",
    );
    let result = run("teacup.xmile", &text);
    let names: Vec<&str> = result.columns().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Teacup Temperature",
            "Heat Loss to Room",
            "Room Temperature",
            "Characteristic Time",
            "INITIAL TIME",
            "FINAL TIME",
            "TIME STEP",
            "SAVEPER"
        ]
    );
    assert_eq!(result.len(), 241, "one row per DT from 0 to 30");
    let temperature = result.column("Teacup Temperature").expect("a column");
    let loss = result.column("Heat Loss to Room").expect("a column");
    for (k, (&t, &q)) in temperature.iter().zip(&loss).enumerate() {
        let expected = 70.0 + 110.0 * (1.0 - 0.125 / 10.0f64).powi(k as i32);
        assert!(
            (t - expected).abs() <= 1e-11 * expected,
            "row {k}: {t} instead of {expected}"
        );
        assert!((q - (expected - 70.0) / 10.0).abs() <= 1e-11, "row {k}: heat loss {q}");
    }
}

/// A non-negative stock drains at 1 per time unit from 25 with DT = 1.5: its outflow is cut
/// to what it holds in the step where it would go below 0 (25 - 16*1.5 = 1, so the 17th
/// step takes 1/1.5), and it stays at 0 after; a uniflow never runs backwards.
#[test]
fn a_non_negative_stock_limits_its_outflow_within_the_step() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>30</stop><dt>1.5</dt>",
        "<stock name=\"S\"><eqn>25</eqn><outflow>out</outflow><non_negative/></stock>\n\
         <flow name=\"out\"><eqn>1</eqn><non_negative/></flow>\n\
         <flow name=\"back\"><eqn>-1</eqn><non_negative/></flow>",
    );
    let result = run("drain.xmile", &text);
    let stock = result.column("S").expect("a column");
    let out = result.column("out").expect("a column");
    let back = result.column("back").expect("a column");
    for k in 0..stock.len() {
        let expected = (25.0 - 1.5 * k as f64).max(0.0);
        assert!((stock[k] - expected).abs() <= 1e-12, "row {k}: S = {}", stock[k]);
        let expected_out = if k < 16 {
            1.0
        } else if k == 16 {
            1.0 / 1.5
        } else {
            0.0
        };
        assert!((out[k] - expected_out).abs() <= 1e-12, "row {k}: out = {}", out[k]);
        assert_eq!(back[k], 0.0);
    }
}

/// A flow that two stocks list as their outflow drains both by its whole rate: `A` may go
/// negative, `B` is non-negative and cannot cut a rate that `A` sees too, so it keeps
/// itself at 0 within the step (25 - 16*1.5 = 1, so 0 from the 17th row on) while the flow
/// stays 1 and `A` goes on falling. A flow that two stocks fill, one of them non-negative,
/// running backwards at -2 from 10: each stock loses 2*DT = 2 per step, the non-negative one
/// stops at 0.
#[test]
fn a_flow_that_several_stocks_drain_or_fill_moves_each_of_them() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>30</stop><dt>1.5</dt>",
        "<flow name=\"out\"><eqn>1</eqn></flow>\n\
         <stock name=\"A\"><eqn>25</eqn><outflow>out</outflow></stock>\n\
         <stock name=\"B\"><eqn>25</eqn><outflow>out</outflow><non_negative/></stock>\n\
         <flow name=\"in\"><eqn>-2/1.5</eqn></flow>\n\
         <stock name=\"C\"><eqn>10</eqn><inflow>in</inflow></stock>\n\
         <stock name=\"D\"><eqn>10</eqn><inflow>in</inflow><non_negative/></stock>",
    );
    let result = run("shared.xmile", &text);
    let [a, b, c, d, out] = ["A", "B", "C", "D", "out"].map(|n| result.column(n).expect("a column"));
    assert_eq!(a.len(), 21);
    for k in 0..a.len() {
        let falling = 25.0 - 1.5 * k as f64;
        assert!((a[k] - falling).abs() <= 1e-12, "row {k}: A = {}", a[k]);
        assert!((b[k] - falling.max(0.0)).abs() <= 1e-12, "row {k}: B = {}", b[k]);
        assert_eq!(out[k], 1.0, "row {k}: the flow is not cut");
        let emptying = 10.0 - 2.0 * k as f64;
        assert!((c[k] - emptying).abs() <= 1e-12, "row {k}: C = {}", c[k]);
        assert!((d[k] - emptying.max(0.0)).abs() <= 1e-12, "row {k}: D = {}", d[k]);
    }
}

/// `PULSE(6, 2)` puts a volume of 6 into the stock during the one step that starts at 2,
/// whatever DT; `SMTH1` of a step of height 1 at time 1 follows the Euler recurrence
/// `y(k+1) = y(k) + DT*(1 - y(k))/4`.
#[test]
fn a_pulse_moves_its_volume_in_one_step_and_a_smooth_follows_euler() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>5</stop><dt>0.25</dt>",
        "<stock name=\"S\"><eqn>0</eqn><inflow>in</inflow></stock>\n\
         <flow name=\"in\"><eqn>PULSE(6, 2)</eqn></flow>\n\
         <aux name=\"y\"><eqn>SMTH1(STEP(1, 1), 4)</eqn></aux>",
    );
    let result = run("pulse.xmile", &text);
    let (time, stock, smooth) = (
        result.time().to_vec(),
        result.column("S").expect("a column"),
        result.column("y").expect("a column"),
    );
    let mut y = 0.0;
    for k in 0..time.len() {
        let expected = if time[k] > 2.0 + 1e-9 { 6.0 } else { 0.0 };
        assert!(
            (stock[k] - expected).abs() <= 1e-12,
            "t = {}: S = {}",
            time[k],
            stock[k]
        );
        assert!(
            (smooth[k] - y).abs() <= 1e-12,
            "t = {}: y = {} instead of {y}",
            time[k],
            smooth[k]
        );
        let input = if time[k] >= 1.0 { 1.0 } else { 0.0 };
        y += 0.25 * (input - y) / 4.0;
    }
}

/// `PREVIOUS` is the value one DT before (its initial value in the first step), `DELAY` the
/// input a delay time before (its initial value until then), both exact on the grid: with
/// `S` doubling each step (`S(k) = 2^k` for DT = 1 and `der(S) = S`), `PREVIOUS(S, -1)` is
/// `2^(k-1)` and `DELAY(S, 2, 0)` is `2^(k-2)`.
#[test]
fn previous_and_delay_read_the_values_of_earlier_steps() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>8</stop><dt>1</dt>",
        "<stock name=\"S\"><eqn>1</eqn><inflow>f</inflow></stock>\n\
         <flow name=\"f\"><eqn>S</eqn></flow>\n\
         <aux name=\"p\"><eqn>PREVIOUS(S, -1)</eqn></aux>\n\
         <aux name=\"d\"><eqn>DELAY(S, 2, 0)</eqn></aux>\n\
         <aux name=\"count\"><eqn>PREVIOUS(count, 0) + 1</eqn></aux>",
    );
    let result = run("previous.xmile", &text);
    let (s, p, d, count) = (
        result.column("S").expect("a column"),
        result.column("p").expect("a column"),
        result.column("d").expect("a column"),
        result.column("count").expect("a column"),
    );
    for k in 0..s.len() {
        assert_eq!(s[k], 2f64.powi(k as i32), "S at row {k}");
        let expected_p = if k == 0 { -1.0 } else { 2f64.powi(k as i32 - 1) };
        assert_eq!(p[k], expected_p, "PREVIOUS at row {k}");
        let expected_d = if k < 2 { 0.0 } else { 2f64.powi(k as i32 - 2) };
        assert!(
            (d[k] - expected_d).abs() <= 1e-12 * expected_d.max(1.0),
            "DELAY at row {k}: {}",
            d[k]
        );
        assert_eq!(count[k], (k + 1) as f64, "count at row {k}");
    }
}

/// An arrayed stock filled element by element from an arrayed flow, and the sum over it:
/// `S[i](k) = k*rate[i]` and `total = SUM(S[*])`.
#[test]
fn arrayed_stocks_and_flows_run_element_by_element() {
    let text = format!(
        "<xmile xmlns=\"http://docs.oasis-open.org/xmile/ns/XMILE/v1.0\" version=\"1.0\">\n\
         <sim_specs method=\"Euler\"><start>0</start><stop>4</stop><dt>1</dt></sim_specs>\n\
         <dimensions><dim name=\"Region\"><elem name=\"North\"/><elem name=\"South\"/></dim></dimensions>\n\
         <model><variables>\n{}\n</variables></model>\n</xmile>\n",
        "<stock name=\"S\"><dimensions><dim name=\"Region\"/></dimensions><eqn>0</eqn><inflow>rate</inflow></stock>\n\
         <flow name=\"rate\"><dimensions><dim name=\"Region\"/></dimensions>\n\
         <element subscript=\"North\"><eqn>2</eqn></element><element subscript=\"South\"><eqn>3</eqn></element></flow>\n\
         <aux name=\"total\"><eqn>SUM(S[*])</eqn></aux>\n\
         <aux name=\"south share\"><eqn>S[South]/MAX(total, 1)</eqn></aux>"
    );
    let result = run("arrays.xmile", &text);
    let north = result.column("S[North]").expect("a column named by its element");
    let south = result.column("S[South]").expect("a column named by its element");
    let total = result.column("total").expect("a column");
    let share = result.column("south share").expect("a column");
    for k in 0..north.len() {
        let k_f = k as f64;
        assert_eq!(
            (north[k], south[k], total[k]),
            (2.0 * k_f, 3.0 * k_f, 5.0 * k_f),
            "row {k}"
        );
        assert_eq!(share[k], 3.0 * k_f / (5.0 * k_f).max(1.0), "row {k}");
    }
}

/// A session made from texts imports a system-dynamics file by its name as one made from
/// bytes does.
#[test]
fn a_session_of_texts_imports_by_the_file_name_too() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>1</stop><dt>0.5</dt>",
        "<stock name=\"S\"><eqn>4</eqn><outflow>out</outflow></stock>\n<flow name=\"out\"><eqn>S</eqn></flow>",
    );
    let mut session = Session::with_sources(&[("m.stmx".to_string(), text)], &[], None);
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let result = model.simulate(&RunSettings::default()).expect("the model runs");
    assert_eq!(result.column("S").expect("a column"), [4.0, 2.0, 1.0]);
}

/// A macro is a function of its parameters: `SCALED(x, k) = x*k + 1`, called with a stock.
#[test]
fn a_macro_is_called_as_a_function_of_its_parameters() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>2</stop><dt>1</dt>",
        "<stock name=\"S\"><eqn>1</eqn><inflow>f</inflow></stock>\n\
         <flow name=\"f\"><eqn>SCALED(S, 2)</eqn></flow>",
    )
    .replace(
        "<model>",
        "<macro name=\"SCALED\"><parm>x</parm><parm>k</parm><eqn>x*k + 1</eqn></macro>\n<model>",
    );
    let result = run("macro.xmile", &text);
    // S: 1, 1 + 3 = 4, 4 + 9 = 13; f = 2*S + 1.
    assert_eq!(result.column("S").expect("a column"), [1.0, 4.0, 13.0]);
    assert_eq!(result.column("f").expect("a column"), [3.0, 9.0, 27.0]);
}

/// The diagram of an imported model holds its stock, its flow and the flow's cloud as the
/// `SystemDynamics` components, connected stock to flow to cloud.
#[test]
fn the_diagram_of_an_imported_model_shows_its_stocks_flows_and_clouds() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>1</stop><dt>0.5</dt>",
        "<stock name=\"S\"><eqn>4</eqn><outflow>out</outflow></stock>\n<flow name=\"out\"><eqn>S</eqn></flow>",
    );
    let mut session = Session::with_source_bytes(vec![("m.xmile".to_string(), text.into_bytes())], &[], None);
    let diagram = session
        .diagram(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let classes: Vec<(&str, &str)> = diagram
        .components
        .iter()
        .map(|c| (c.name.as_str(), c.class_name.as_str()))
        .collect();
    assert_eq!(
        classes,
        [
            ("S", "SystemDynamics.Reservoirs.Stock"),
            ("out", "SystemDynamics.Flows.Flow"),
            ("'out sink'", "SystemDynamics.Reservoirs.CloudSink"),
        ]
    );
    assert_eq!(diagram.connections.len(), 2);
}

/// The diagram of an imported model keeps the layout of the file's own diagram: the stock
/// drawn right of and below its outflow's valve where the file puts it there, the sink beside
/// the valve; the y of the file grows downwards as the drawing's does.
#[test]
fn the_diagram_of_an_imported_model_keeps_the_file_s_layout() {
    let text = format!(
        "<xmile xmlns=\"http://docs.oasis-open.org/xmile/ns/XMILE/v1.0\" version=\"1.0\">\n\
         <sim_specs method=\"Euler\"><start>0</start><stop>1</stop><dt>0.5</dt></sim_specs>\n<model><variables>\n{}\n</variables>\n\
         <views><view><stock name=\"S\" x=\"100\" y=\"300\"/><flow name=\"out\" x=\"400\" y=\"100\"/></view></views></model>\n</xmile>\n",
        "<stock name=\"S\"><eqn>4</eqn><outflow>out</outflow></stock>\n<flow name=\"out\"><eqn>S</eqn></flow>"
    );
    let mut session = Session::with_source_bytes(vec![("m.xmile".to_string(), text.into_bytes())], &[], None);
    let diagram = session
        .diagram(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let svg = eqm::diagram::svg(&diagram);
    // Each component's box as `x y w h`, by name.
    let boxes: Vec<(String, Vec<f64>)> = svg
        .split("<g class=\"component\" data-name=\"")
        .skip(1)
        .map(|part| {
            let name = part.split('"').next().unwrap_or("").to_string();
            let numbers = part
                .split("data-box=\"")
                .nth(1)
                .and_then(|b| b.split('"').next())
                .unwrap_or("");
            (name, numbers.split(' ').filter_map(|n| n.parse().ok()).collect())
        })
        .collect();
    let centre = |name: &str| {
        let b = &boxes
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no box {name} in {boxes:?}"))
            .1;
        (b[0] + b[2] / 2.0, b[1] + b[3] / 2.0)
    };
    let (stock, valve, sink) = (centre("S"), centre("out"), centre("&apos;out sink&apos;"));
    assert!(
        stock.0 < valve.0 && valve.0 < sink.0,
        "left to right as in the file: {boxes:?}"
    );
    assert!(stock.1 > valve.1, "the stock below the valve as in the file: {boxes:?}");
    // The file's distances keep their proportions: the valve is 300 right and 200 up of the
    // stock, so the drawing's horizontal distance is 1.5 times its vertical one.
    let ratio = (valve.0 - stock.0) / (stock.1 - valve.1);
    assert!((ratio - 1.5).abs() < 0.05, "{ratio}");
}

/// A uniflow given by a graphical function of time never runs backwards, and its stock gains
/// DT times the function's value in each step.
#[test]
fn a_uniflow_given_by_a_graphical_function_is_cut_at_zero() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>4</stop><dt>1</dt>",
        "<stock name=\"S\"><eqn>0</eqn><inflow>f</inflow></stock>\n\
         <flow name=\"f\"><eqn>TIME</eqn><non_negative/><gf><xpts>0,4</xpts><ypts>-2,2</ypts></gf></flow>",
    );
    let result = run("gf_flow.xmile", &text);
    // f = max(t - 2, 0): 0, 0, 0, 1, 2; S sums the earlier steps: 0, 0, 0, 0, 1.
    assert_eq!(result.column("f").expect("a column"), [0.0, 0.0, 0.0, 1.0, 2.0]);
    assert_eq!(result.column("S").expect("a column"), [0.0, 0.0, 0.0, 0.0, 1.0]);
}

/// A module is its model's variables under `Module.Variable`: its input bound to the outside
/// variable it is connected from, its output carried to the outside variable connected to
/// it. With the input `2*time`, the module's stock gains DT times it in each step.
#[test]
fn a_module_runs_its_model_with_the_inputs_connected_to_it() {
    let text = r#"<xmile version="1.0" xmlns="http://docs.oasis-open.org/xmile/ns/XMILE/v1.0">
 <sim_specs method="Euler"><start>1</start><stop>3</stop><dt>0.5</dt></sim_specs>
 <model>
  <variables>
   <module name="Sub_Model">
    <connect to="Input" from=".Root_Model_Output"/>
    <connect to=".Root_Model_Input" from="Sub_Model.Output"/>
   </module>
   <aux name="Root_Model_Output" access="output"><eqn>TIME*2</eqn></aux>
   <aux name="Root_Model_Input" access="input"/>
  </variables>
 </model>
 <model name="Sub_Model">
  <variables>
   <aux name="Input" access="input"/>
   <aux name="Output" access="output"><eqn>Input + 1</eqn></aux>
   <stock name="Level"><eqn>0</eqn><inflow>fill</inflow></stock>
   <flow name="fill"><eqn>Input</eqn></flow>
  </variables>
 </model>
</xmile>
"#;
    let result = run("module.xmile", text);
    let time = result.time().to_vec();
    let level = result
        .column("Sub_Model.Level")
        .expect("a column named module.variable");
    let back = result.column("Root_Model_Input").expect("a column");
    let mut expected = 0.0;
    for k in 0..time.len() {
        assert_eq!(level[k], expected, "t = {}", time[k]);
        assert_eq!(back[k], 2.0 * time[k] + 1.0, "t = {}", time[k]);
        expected += 0.5 * 2.0 * time[k];
    }
}

/// A module inside a module: the outer module's model holds a module of a third model, whose
/// variables are named `outer.inner.variable` (`Middle.Bottom.Level`), its input bound inside the outer model. The
/// inner stock integrates twice the outer input (`2*TIME`): `Level(t) = sum of DT*2*t` over
/// the steps before.
#[test]
fn a_module_inside_a_module_runs_with_its_inputs_bound_where_it_is() {
    let text = r#"<xmile version="1.0" xmlns="http://docs.oasis-open.org/xmile/ns/XMILE/v1.0">
 <sim_specs method="Euler"><start>0</start><stop>2</stop><dt>0.25</dt></sim_specs>
 <model>
  <variables>
   <module name="Middle"><connect to="x" from=".t"/></module>
   <aux name="t"><eqn>TIME</eqn></aux>
  </variables>
 </model>
 <model name="Middle">
  <variables>
   <aux name="x" access="input"/>
   <aux name="doubled"><eqn>2*x</eqn></aux>
   <module name="Bottom"><connect to="u" from=".doubled"/></module>
  </variables>
 </model>
 <model name="Bottom">
  <variables>
   <aux name="u" access="input"/>
   <stock name="Level"><eqn>0</eqn><inflow>fill</inflow></stock>
   <flow name="fill"><eqn>u</eqn></flow>
  </variables>
 </model>
</xmile>
"#;
    let result = run("nested.xmile", text);
    let time = result.time().to_vec();
    let level = result
        .column("Middle.Bottom.Level")
        .expect("a column named outer.inner.variable");
    let mut expected = 0.0;
    for k in 0..time.len() {
        assert!((level[k] - expected).abs() <= 1e-12, "t = {}: {}", time[k], level[k]);
        expected += 0.25 * 2.0 * time[k];
    }
}

/// A model that contains itself through its modules is refused (E1009), not written out
/// without end.
#[test]
fn a_model_that_contains_itself_through_its_modules_is_e1009() {
    let text = r#"<xmile version="1.0" xmlns="http://docs.oasis-open.org/xmile/ns/XMILE/v1.0">
 <sim_specs method="Euler"><start>0</start><stop>1</stop><dt>1</dt></sim_specs>
 <model><variables><module name="Loop"/></variables></model>
 <model name="Loop"><variables><aux name="y"><eqn>1</eqn></aux><module name="Loop"/></variables></model>
</xmile>
"#;
    let diagnostics = refused("loop.xmile", text);
    assert!(
        diagnostics.contains("E1009") && diagnostics.contains("contains it"),
        "{diagnostics}"
    );
}

/// The diagnostics of a file that does not compile.
fn refused(name: &str, text: &str) -> String {
    let mut session = Session::with_source_bytes(vec![(name.to_string(), text.as_bytes().to_vec())], &[], None);
    assert!(
        session.compile(None, &ModelOptions::default()).is_none(),
        "{name} compiled"
    );
    session.render_diagnostics(false)
}

/// An XMILE file of `variables` with a dimension `d` of four elements.
fn xmile_with_dimension(specs: &str, variables: &str) -> String {
    xmile(specs, variables).replace(
        "<model>",
        "<dimensions><dim name=\"d\" size=\"4\"/></dimensions>\n<model>",
    )
}

fn column(result: &SimulationResult, name: &str) -> Vec<f64> {
    result.column(name).unwrap_or_else(|| panic!("no column {name}"))
}

/// `NPV(stream, rate, initial, factor)` is Vensim's `(accumulated + stream*DT*df)*factor`
/// with `accumulated = INTEG(stream*df, initial)` and `df = INTEG(-df*rate/(1 + rate*DT), 1)`;
/// by Euler's steps `df(k) = (1 + rate*DT)^-k`, iterated here with a stream that grows with
/// the time (`10 + t`), DT = 0.5.
#[test]
fn npv_discounts_each_step_as_vensim_defines_it() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>10</stop><dt>0.5</dt>",
        "<aux name=\"stream\"><eqn>10 + TIME</eqn></aux>\n\
         <aux name=\"v\"><eqn>NPV(stream, 0.08, 3, 2)</eqn></aux>\n\
         <aux name=\"plain\"><eqn>NPV(stream, 0.08)</eqn></aux>",
    );
    let result = run("npv.xmile", &text);
    let (time, v, plain) = (result.time().to_vec(), column(&result, "v"), column(&result, "plain"));
    assert_eq!(time.len(), 21);
    let (dt, rate) = (0.5, 0.08);
    let (mut df, mut accumulated_v, mut accumulated_plain) = (1.0f64, 3.0f64, 0.0f64);
    for k in 0..time.len() {
        let stream = 10.0 + time[k];
        let expected_v = (accumulated_v + stream * dt * df) * 2.0;
        let expected_plain = accumulated_plain + stream * dt * df;
        assert!(
            (v[k] - expected_v).abs() <= 1e-10 * expected_v,
            "t = {}: {} instead of {expected_v}",
            time[k],
            v[k]
        );
        assert!(
            (plain[k] - expected_plain).abs() <= 1e-10 * expected_plain.max(1.0),
            "t = {}: {}",
            time[k],
            plain[k]
        );
        accumulated_v += dt * stream * df;
        accumulated_plain += dt * stream * df;
        df -= dt * df * rate / (1.0 + rate * dt);
    }
}

/// `STDDEV` of an array is the population's standard deviation (divided by the number of
/// elements): of 1, 2, 3 and 6, sqrt(3.5).
#[test]
fn stddev_is_the_deviation_of_the_population() {
    let text = xmile_with_dimension(
        "method=\"Euler\"><start>0</start><stop>1</stop><dt>1</dt>",
        "<aux name=\"a\"><dimensions><dim name=\"d\"/></dimensions>\
           <element subscript=\"1\"><eqn>1</eqn></element><element subscript=\"2\"><eqn>2</eqn></element>\
           <element subscript=\"3\"><eqn>3</eqn></element><element subscript=\"4\"><eqn>6</eqn></element></aux>\n\
         <aux name=\"s\"><eqn>STDDEV(a[*])</eqn></aux>",
    );
    let result = run("stddev.xmile", &text);
    for s in column(&result, "s") {
        assert!((s - 3.5f64.sqrt()).abs() <= 1e-14, "{s}");
    }
}

const MODULUS: u64 = 2_147_483_647;

/// The stream of `seed` as a plain sequence, one state per step: the state `1 + seed`
/// advanced by eight draws, then by 1024 draws from one step to the next (the documented
/// generator run draw by draw, independent of the jumps the model computes).
fn stream_states(seed: u64, steps: usize) -> Vec<u64> {
    let advance = |x: u64, draws: usize| (0..draws).fold(x, |x, _| x * 48_271 % MODULUS);
    let mut states = vec![advance(1 + seed, 8)];
    let per_step = advance(1, 1024);
    for k in 1..steps {
        states.push(states[k - 1] * per_step % MODULUS);
    }
    states
}

/// The first draw of each step of the stream of `seed`, as a fraction of the modulus.
fn first_draws(seed: u64, steps: usize) -> Vec<f64> {
    stream_states(seed, steps)
        .into_iter()
        .map(|x| (x * 48_271 % MODULUS) as f64 / MODULUS as f64)
        .collect()
}

/// `RANDOM(min, max, seed)` draws the documented stream: at step `k` the value is `min +
/// (max - min)*u` with `u` the stream's first draw of the step, the same within a step and
/// for two calls of one seed; over 2000 steps the values fill `[0, 10)` with the mean and
/// deviation of the uniform distribution (5 and 2.89, within four standard errors).
#[test]
fn random_draws_its_seeded_stream_once_per_step() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>1000</stop><dt>0.5</dt>",
        "<aux name=\"u\"><eqn>RANDOM(0, 10, 42)</eqn></aux>\n\
         <aux name=\"same\"><eqn>RANDOM(0, 10, 42)</eqn></aux>\n\
         <aux name=\"other\"><eqn>RANDOM(0, 10)</eqn></aux>",
    );
    let result = run("random.xmile", &text);
    let (u, same, other) = (column(&result, "u"), column(&result, "same"), column(&result, "other"));
    assert_eq!(u.len(), 2001);
    let draws = first_draws(42, u.len());
    for (k, value) in u.iter().enumerate() {
        let expected = 10.0 * draws[k];
        assert!(
            (value - expected).abs() <= 1e-12,
            "step {k}: {value} instead of {expected}"
        );
        assert_eq!(*value, same[k], "step {k}");
    }
    // A call without a seed is seeded by its place (the first such call: 1).
    assert!((other[7] - 10.0 * first_draws(1, 8)[7]).abs() <= 1e-12);
    let n = u.len() as f64;
    let mean = u.iter().sum::<f64>() / n;
    let deviation = (u.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
    assert!((mean - 5.0).abs() < 4.0 * 2.887 / n.sqrt(), "mean {mean}");
    assert!((deviation - 2.887).abs() < 0.15, "deviation {deviation}");
    assert!(u.iter().all(|x| (0.0..10.0).contains(x)));
}

/// `NORMAL(mean, sd, seed)` and `EXPRND(mean, seed)`: the sample mean and deviation of 4000
/// steps within four standard errors of 5 and 2 (normal) and of 3 and 3 (exponential); the
/// normal value of step 0 is Box and Muller's from the stream's first two draws.
#[test]
fn normal_and_exponential_draws_follow_their_distributions() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>4000</stop><dt>1</dt>",
        "<aux name=\"n\"><eqn>NORMAL(5, 2, 7)</eqn></aux>\n\
         <aux name=\"e\"><eqn>EXPRND(3, 11)</eqn></aux>",
    );
    let result = run("normal.xmile", &text);
    let (normal, exponential) = (column(&result, "n"), column(&result, "e"));
    let x1 = stream_states(7, 1)[0] * 48_271 % MODULUS;
    let x2 = x1 * 48_271 % MODULUS;
    let (u1, u2) = (x1 as f64 / MODULUS as f64, x2 as f64 / MODULUS as f64);
    let first = 5.0 + 2.0 * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
    assert!((normal[0] - first).abs() <= 1e-12, "{} instead of {first}", normal[0]);
    let n = normal.len() as f64;
    for (values, mean, sd) in [(&normal, 5.0, 2.0), (&exponential, 3.0, 3.0)] {
        let m = values.iter().sum::<f64>() / n;
        let s = (values.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n).sqrt();
        assert!((m - mean).abs() < 4.0 * sd / n.sqrt(), "mean {m} instead of {mean}");
        assert!((s - sd).abs() < 0.1 * sd, "deviation {s} instead of {sd}");
    }
    assert!(exponential.iter().all(|&x| x > 0.0));
}

/// `LOGNORMAL(mean, sd, seed)` is `exp` of a normal draw of that mean and deviation (the
/// logarithm's: isee's examples call it with a mean of 0), so the logarithms of 4000 steps have
/// the sample mean 1 and deviation 0.5 within four standard errors; step 0 is `exp` of Box and
/// Muller's value from the stream's first two draws.
/// `POISSON(mean, seed)` is the inverse of Poisson's distribution function at the step's
/// first draw: step by step the smallest `k` with `P(X <= k) >= u`, computed here from the
/// closed form; a whole number, with the mean and variance 4.5 of 4000 steps within four
/// standard errors, and the mean 1000 where `exp(-1000)` underflows. A mean of 0 draws 0.
#[test]
fn lognormal_and_poisson_draws_follow_their_distributions() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>4000</stop><dt>1</dt>",
        "<aux name=\"l\"><eqn>LOGNORMAL(1, 0.5, 13)</eqn></aux>\n\
         <aux name=\"p\"><eqn>POISSON(4.5, 17)</eqn></aux>\n\
         <aux name=\"big\"><eqn>POISSON(1000, 19)</eqn></aux>\n\
         <aux name=\"none\"><eqn>POISSON(0)</eqn></aux>",
    );
    let result = run("draws.xmile", &text);
    let (lognormal, poisson, big) = (column(&result, "l"), column(&result, "p"), column(&result, "big"));
    let n = lognormal.len() as f64;
    let x1 = stream_states(13, 1)[0] * 48_271 % MODULUS;
    let x2 = x1 * 48_271 % MODULUS;
    let (u1, u2) = (x1 as f64 / MODULUS as f64, x2 as f64 / MODULUS as f64);
    let first = (1.0 + 0.5 * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()).exp();
    assert!(
        (lognormal[0] - first).abs() <= 1e-12 * first,
        "{} instead of {first}",
        lognormal[0]
    );
    let logs: Vec<f64> = lognormal.iter().map(|x| x.ln()).collect();
    let (m, s) = mean_and_deviation(&logs);
    assert!((m - 1.0).abs() < 4.0 * 0.5 / n.sqrt(), "mean of the logarithms {m}");
    assert!((s - 0.5).abs() < 0.05, "deviation of the logarithms {s}");
    for (k, (&value, u)) in poisson.iter().zip(first_draws(17, poisson.len())).enumerate() {
        assert_eq!(value, poisson_inverse(4.5, u) as f64, "step {k}");
    }
    for (values, mean) in [(&poisson, 4.5), (&big, 1000.0)] {
        let (m, s) = mean_and_deviation(values);
        assert!((m - mean).abs() < 4.0 * (mean / n).sqrt(), "mean {m} instead of {mean}");
        assert!(
            (s * s - mean).abs() < 0.1 * mean,
            "variance {} instead of {mean}",
            s * s
        );
        assert!(values.iter().all(|x| x.fract() == 0.0 && *x >= 0.0));
    }
    assert!(column(&result, "none").iter().all(|&x| x == 0.0));
}

/// isee's `BETA`, `BINOMIAL`, `GAMMA` (a shape below 1 too), `TRIANGULAR` and `WEIBULL` over
/// 4000 steps against their distributions' means and variances (within four standard errors
/// of the mean and 10 % of the variance).
#[test]
fn isee_random_distributions_have_their_means_and_variances() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>3999</stop><dt>1</dt>",
        "<aux name=\"beta\"><eqn>BETA(2, 5, 11)</eqn></aux>\n\
         <aux name=\"binomial\"><eqn>BINOMIAL(20, 0.3, 13)</eqn></aux>\n\
         <aux name=\"gamma\"><eqn>GAMMA(3, 2, 7)</eqn></aux>\n\
         <aux name=\"small\"><eqn>GAMMA(0.5, 1, 31)</eqn></aux>\n\
         <aux name=\"triangular\"><eqn>TRIANGULAR(0, 1, 4, 3)</eqn></aux>\n\
         <aux name=\"weibull\"><eqn>WEIBULL(2, 3, 5)</eqn></aux>",
    );
    let result = run("isee.xmile", &text);
    // Weibull of shape 2 and scale 3: mean 3 Gamma(1.5), variance 9 (1 - Gamma(1.5)^2).
    let gamma_3_2 = std::f64::consts::PI.sqrt() / 2.0;
    for (name, mean, variance) in [
        ("beta", 2.0 / 7.0, 10.0 / (49.0 * 8.0)),
        ("binomial", 6.0, 4.2),
        ("gamma", 6.0, 12.0),
        ("small", 0.5, 0.5),
        ("triangular", 5.0 / 3.0, 13.0 / 18.0),
        ("weibull", 3.0 * gamma_3_2, 9.0 * (1.0 - gamma_3_2 * gamma_3_2)),
    ] {
        assert_moments(&column(&result, name), name, mean, variance);
    }
}

/// The sample mean of `values` within four standard errors of `mean`, their variance within
/// 10 % of `variance`.
fn assert_moments(values: &[f64], name: &str, mean: f64, variance: f64) {
    let n = values.len() as f64;
    let (m, s) = mean_and_deviation(values);
    assert!(
        (m - mean).abs() < 4.0 * (variance / n).sqrt(),
        "{name}: mean {m} instead of {mean}"
    );
    assert!(
        (s * s - variance).abs() < 0.1 * variance,
        "{name}: variance {} instead of {variance}",
        s * s
    );
}

fn mean_and_deviation(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let m = values.iter().sum::<f64>() / n;
    (m, (values.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n).sqrt())
}

/// The smallest `k` with `sum_{j <= k} exp(-mean) mean^j / j! >= u`.
fn poisson_inverse(mean: f64, u: f64) -> u64 {
    let (mut k, mut term) = (0u64, (-mean).exp());
    let mut cumulative = term;
    while cumulative < u {
        k += 1;
        term *= mean / k as f64;
        cumulative += term;
    }
    k
}

/// Vensim's `RANDOM UNIFORM(min, max, seed)` and `RANDOM NORMAL(min, max, mean, sd, seed)`
/// (truncated to `[min, max]`) and `RANDOM EXPONENTIAL(min, max, shift, stretch, seed)`:
/// every value within its bounds, the uniform one the documented stream's.
#[test]
fn vensim_random_functions_stay_within_their_bounds() {
    let text = vensim_equations(&[
        "u = RANDOM UNIFORM(-1, 1, 5)",
        "n = RANDOM NORMAL(0, 1, 0.5, 2, 6)",
        "x = RANDOM EXPONENTIAL(1, 4, 1, 2, 8)",
        "FINAL TIME = 500",
        "INITIAL TIME = 0",
        "SAVEPER = TIME STEP",
        "TIME STEP = 1",
    ]);
    let result = run("random.mdl", &text);
    let (u, n, x) = (column(&result, "u"), column(&result, "n"), column(&result, "x"));
    let draws = first_draws(5, u.len());
    for k in 0..u.len() {
        let expected = -1.0 + 2.0 * draws[k];
        assert!((u[k] - expected).abs() <= 1e-12, "step {k}: {}", u[k]);
        assert!((0.0..=1.0).contains(&n[k]), "step {k}: {}", n[k]);
        assert!((1.0..=4.0).contains(&x[k]), "step {k}: {}", x[k]);
    }
    // The truncation draws again rather than clamping: no value sits on a bound.
    assert!(n.iter().all(|&v| v > 0.0 && v < 1.0));
}

/// Vensim's other random functions, each over 4000 steps against its distribution's mean and
/// variance (after the stretch and shift; within four standard errors of the mean and 10 % of
/// the variance): `RANDOM POISSON` (odd numbers `1 + 2k`), `RANDOM TRIANGULAR`, `RANDOM
/// WEIBULL` of mean 1 stretched, `RANDOM GAMMA`, `RANDOM BETA` (also with shapes below 1),
/// `RANDOM BINOMIAL` and `RANDOM NEGATIVE BINOMIAL` (whole numbers in their ranges), and a
/// truncated gamma draw within its bounds.
#[test]
fn vensim_random_distributions_have_their_means_and_variances() {
    let text = vensim_equations(&[
        "poisson = RANDOM POISSON(0, 1000, 4.5, 1, 2, 17)",
        "triangular = RANDOM TRIANGULAR(-100, 100, 0, 1, 4, 3)",
        "weibull = RANDOM WEIBULL(0, 1000, 2, 0, 3, 5)",
        "gamma = RANDOM GAMMA(0, 1000, 3, 0, 2, 7)",
        "beta = RANDOM BETA(0, 1, 2, 5, 0, 1, 11)",
        "arcsine = RANDOM BETA(0, 1, 0.5, 0.5, 0, 1, 29)",
        "binomial = RANDOM BINOMIAL(0, 100, 0.3, 20, 0, 1, 13)",
        "trials = RANDOM NEGATIVE BINOMIAL(0, 1000, 0.4, 3, 0, 1, 19)",
        "bounded = RANDOM GAMMA(5, 7, 3, 0, 2, 23)",
        "FINAL TIME = 3999",
        "INITIAL TIME = 0",
        "SAVEPER = TIME STEP",
        "TIME STEP = 1",
    ]);
    let result = run("distributions.mdl", &text);
    // Weibull of shape 2 and mean 1: variance Gamma(2)/Gamma(1.5)^2 - 1 = 4/pi - 1.
    let weibull_variance = 9.0 * (4.0 / std::f64::consts::PI - 1.0);
    for (name, mean, variance) in [
        ("poisson", 10.0, 18.0),
        ("triangular", 5.0 / 3.0, 13.0 / 18.0),
        ("weibull", 3.0, weibull_variance),
        ("gamma", 6.0, 12.0),
        ("beta", 2.0 / 7.0, 10.0 / (49.0 * 8.0)),
        ("arcsine", 0.5, 0.125),
        ("binomial", 6.0, 4.2),
        ("trials", 7.5, 11.25),
    ] {
        let values = column(&result, name);
        assert_eq!(values.len(), 4000, "{name}");
        assert_moments(&values, name, mean, variance);
    }
    assert!(
        column(&result, "poisson")
            .iter()
            .all(|x| x.fract() == 0.0 && (x - 1.0) % 2.0 == 0.0)
    );
    assert!(
        column(&result, "binomial")
            .iter()
            .all(|x| x.fract() == 0.0 && (0.0..=20.0).contains(x))
    );
    assert!(column(&result, "trials").iter().all(|x| x.fract() == 0.0 && *x >= 3.0));
    assert!(column(&result, "triangular").iter().all(|x| (0.0..=4.0).contains(x)));
    assert!(column(&result, "bounded").iter().all(|x| (5.0..=7.0).contains(x)));
}

/// Vensim's `LOOKUP EXTRAPOLATE`, `LOOKUP FORWARD` and `LOOKUP BACKWARD` of the lookup
/// `(0,0), (1,10), (2,15)` at every quarter from 0 to 3: the extrapolating lines (20 at 3), the
/// value of the first point at or right of the time, and of the last point at or left of it;
/// `LOOKUP INVERT` of it and of the falling `(0,10), (1,5), (2,0)`, the `x` where the lines
/// reach the value (the nearer end's outside them). A lookup that rises and falls stops the
/// run rather than inverting.
#[test]
fn vensim_lookup_functions_read_their_table_as_named() {
    let text = vensim_equations(&[
        "tab(\n\t(0,0),(1,10),(2,15))",
        "a = LOOKUP EXTRAPOLATE(tab, Time)",
        "b = LOOKUP FORWARD(tab, Time)",
        "c = LOOKUP BACKWARD(tab, Time)",
        "falling(\n\t(0,10),(1,5),(2,0))",
        "d = LOOKUP INVERT(tab, 5*Time)",
        "e = LOOKUP INVERT(falling, 3*Time)",
        "FINAL TIME = 3",
        "INITIAL TIME = 0",
        "SAVEPER = TIME STEP",
        "TIME STEP = 0.25",
    ]);
    let result = run("lookups.mdl", &text);
    let (a, b, c) = (column(&result, "a"), column(&result, "b"), column(&result, "c"));
    let points = [(0.0, 0.0), (1.0, 10.0), (2.0, 15.0)];
    for (k, &t) in result.time().iter().enumerate() {
        let lines = if t <= 1.0 { 10.0 * t } else { 10.0 + 5.0 * (t - 1.0) };
        let forward = points.iter().find(|p| p.0 >= t).map_or(15.0, |p| p.1);
        let backward = points.iter().rev().find(|p| p.0 <= t).map_or(0.0, |p| p.1);
        assert!((a[k] - lines).abs() < 1e-12, "t = {t}: extrapolate {}", a[k]);
        assert_eq!(b[k], forward, "t = {t}: forward");
        assert_eq!(c[k], backward, "t = {t}: backward");
        let y = 5.0 * t;
        let rising = if y <= 10.0 {
            y / 10.0
        } else {
            (1.0 + (y - 10.0) / 5.0).min(2.0)
        };
        let y = 3.0 * t;
        let falling = if y >= 5.0 {
            ((10.0 - y) / 5.0).max(0.0)
        } else {
            (1.0 + (5.0 - y) / 5.0).min(2.0)
        };
        let (d, e) = (column(&result, "d")[k], column(&result, "e")[k]);
        assert!((d - rising).abs() < 1e-12, "t = {t}: invert {d} instead of {rising}");
        assert!((e - falling).abs() < 1e-12, "t = {t}: invert {e} instead of {falling}");
    }
    let text = vensim_equations(&[
        "bump(\n\t(0,0),(1,10),(2,5))",
        "d = LOOKUP INVERT(bump, Time)",
        "FINAL TIME = 1",
        "INITIAL TIME = 0",
        "SAVEPER = TIME STEP",
        "TIME STEP = 0.5",
    ]);
    let error = run_error("bump.mdl", &text);
    assert!(error.contains("rise or fall strictly"), "{error}");
}

/// A Vensim file of `equations`, each without units or comment.
fn vensim_equations(equations: &[&str]) -> String {
    let mut text = String::from("{UTF-8}\n");
    for e in equations {
        text.push_str(e);
        text.push_str("\n\t~\t\n\t~\t\t|\n\n");
    }
    text
}

/// A conveyor with a transit time of 3 and DT = 0.5 has six slats: its 6 units at the start
/// leave at 6/3 = 2 per time unit during the first three time units, then what entered
/// three time units earlier leaves (the inflow is 4 from t = 1 to t = 5, else 0); its
/// contents follow Euler's steps of inflow minus outflow.
#[test]
fn a_conveyor_delivers_what_entered_one_transit_time_earlier() {
    let text = xmile(
        "method=\"Euler\"><start>0</start><stop>12</stop><dt>0.5</dt>",
        "<stock name=\"belt\"><eqn>6</eqn><inflow>loading</inflow><outflow>arriving</outflow>\
           <conveyor><len>transit</len></conveyor></stock>\n\
         <aux name=\"transit\"><eqn>3</eqn></aux>\n\
         <flow name=\"loading\"><eqn>IF TIME >= 1 AND TIME &lt; 5 THEN 4 ELSE 0</eqn><non_negative/></flow>\n\
         <flow name=\"arriving\"><non_negative/></flow>\n\
         <stock name=\"done\"><eqn>0</eqn><inflow>arriving</inflow></stock>",
    );
    let result = run("conveyor.xmile", &text);
    let (time, belt, arriving, done) = (
        result.time().to_vec(),
        column(&result, "belt"),
        column(&result, "arriving"),
        column(&result, "done"),
    );
    let loading = |t: f64| if (1.0..5.0).contains(&t) { 4.0 } else { 0.0 };
    let (mut contents, mut delivered) = (6.0, 0.0);
    for k in 0..time.len() {
        let t = time[k];
        let out = if t < 3.0 { 2.0 } else { loading(t - 3.0) };
        assert!(
            (arriving[k] - out).abs() <= 1e-12,
            "t = {t}: outflow {} instead of {out}",
            arriving[k]
        );
        assert!(
            (belt[k] - contents).abs() <= 1e-12,
            "t = {t}: contents {} instead of {contents}",
            belt[k]
        );
        assert!((done[k] - delivered).abs() <= 1e-12, "t = {t}: delivered {}", done[k]);
        contents += 0.5 * (loading(t) - out);
        delivered += 0.5 * out;
    }
    assert!((delivered - 22.0).abs() <= 1e-12, "everything arrives: 6 + 16");
}

/// What EQM's conveyor does not do is refused at its tag, never left out.
#[test]
fn a_conveyor_s_capacity_and_leakage_are_refused_by_name() {
    let capacity = xmile(
        "method=\"Euler\"><start>0</start><stop>1</stop><dt>1</dt>",
        "<stock name=\"belt\"><eqn>0</eqn><inflow>i</inflow><outflow>o</outflow>\
           <conveyor><len>2</len><capacity>5</capacity></conveyor></stock>\n\
         <flow name=\"i\"><eqn>1</eqn></flow>\n<flow name=\"o\"/>",
    );
    let text = refused("capacity.xmile", &capacity);
    assert!(text.contains("E1002") && text.contains("capacity"), "{text}");
    let leak = xmile(
        "method=\"Euler\"><start>0</start><stop>1</stop><dt>1</dt>",
        "<stock name=\"belt\"><eqn>0</eqn><inflow>i</inflow><outflow>o</outflow><outflow>leak</outflow>\
           <conveyor><len>2</len></conveyor></stock>\n\
         <flow name=\"i\"><eqn>1</eqn></flow>\n<flow name=\"o\"/>\n<flow name=\"leak\"><eqn>0.1</eqn></flow>",
    );
    let text = refused("leak.xmile", &leak);
    assert!(text.contains("E1002") && text.contains("leakage"), "{text}");
    let lonely = xmile(
        "method=\"Euler\"><start>0</start><stop>1</stop><dt>1</dt>",
        "<flow name=\"o\"/>",
    );
    let text = refused("lonely.xmile", &lonely);
    assert!(text.contains("E1007"), "{text}");
}

/// An XMILE macro with a stock of its own keeps one copy per call: `ACCUMULATE(x)` is a stock
/// filled by `x` from 0, its value the stock times 2; called with 1 and with `TIME`, the
/// copies hold `2*t` and `2*(sum of DT*t over the steps before)` (DT = 0.5).
#[test]
fn an_xmile_macro_with_a_stock_keeps_one_copy_per_call() {
    let text = "<xmile xmlns=\"http://docs.oasis-open.org/xmile/ns/XMILE/v1.0\" version=\"1.0\">\n\
        <sim_specs method=\"Euler\"><start>0</start><stop>5</stop><dt>0.5</dt></sim_specs>\n\
        <macro name=\"ACCUMULATE\"><parm>x</parm><eqn>2*held</eqn>\n\
          <variables><stock name=\"held\"><eqn>0</eqn><inflow>adding</inflow></stock>\n\
          <flow name=\"adding\"><eqn>x</eqn><non_negative/></flow></variables></macro>\n\
        <model><variables>\n\
          <aux name=\"a\"><eqn>ACCUMULATE(1)</eqn></aux>\n\
          <aux name=\"b\"><eqn>ACCUMULATE(TIME)</eqn></aux>\n\
        </variables></model>\n</xmile>\n";
    let result = run("macro.xmile", text);
    let (time, a, b) = (result.time().to_vec(), column(&result, "a"), column(&result, "b"));
    let mut held_b = 0.0;
    for k in 0..time.len() {
        assert!((a[k] - 2.0 * time[k]).abs() <= 1e-12, "t = {}: a = {}", time[k], a[k]);
        assert!((b[k] - 2.0 * held_b).abs() <= 1e-12, "t = {}: b = {}", time[k], b[k]);
        held_b += 0.5 * time[k];
    }
}
