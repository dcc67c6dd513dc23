//! The `.eqm` text the writer gives for small XMILE models (snapshots: a change of the
//! writer's output is reviewed), and the result columns it reports.

use eqm_diag::source::SourceMap;
use eqm_sd::{Format, import};

fn import_text(text: &str) -> eqm_sd::Imported {
    let mut map = SourceMap::new();
    let file = map.add("teacup.xmile", text);
    import(file, "teacup.xmile", text, Format::Xmile)
}

const TEACUP: &str = r#"<xmile xmlns="http://docs.oasis-open.org/xmile/ns/XMILE/v1.0" version="1.0">
  <header><name>Teacup</name></header>
  <sim_specs method="Euler" time_units="Minutes">
    <start>0</start><stop>30</stop><dt>0.125</dt>
  </sim_specs>
  <model>
    <variables>
      <stock name="Teacup Temperature">
        <doc>The temperature of the tea.</doc>
        <eqn>180</eqn>
        <outflow>Heat_Loss_to_Room</outflow>
        <units>Degrees</units>
      </stock>
      <flow name="Heat Loss to Room">
        <eqn>(Teacup_Temperature - Room_Temperature)/Characteristic_Time</eqn>
        <units>Degrees/Minute</units>
      </flow>
      <aux name="Room Temperature"><eqn>70</eqn></aux>
      <aux name="Characteristic Time"><eqn>10</eqn></aux>
    </variables>
  </model>
</xmile>
"#;

#[test]
fn the_teacup_is_a_stock_a_flow_and_two_parameters() {
    let imported = import_text(TEACUP);
    assert!(imported.diagnostics.is_empty(), "{:?}", imported.diagnostics);
    insta::assert_snapshot!(imported.text.expect("the teacup imports"));
    let names: Vec<&str> = imported.columns.iter().map(|(_, name)| name.as_str()).collect();
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
}

#[test]
fn builtins_logic_graphs_and_non_negative_stocks() {
    let text = r#"<xmile xmlns="http://docs.oasis-open.org/xmile/ns/XMILE/v1.0" version="1.0">
  <sim_specs method="RK4"><start>0</start><stop>10</stop><dt>0.5</dt></sim_specs>
  <model>
    <variables>
      <stock name="s"><eqn>INIT(a)*2</eqn><inflow>f</inflow><outflow>g</outflow><non_negative/></stock>
      <flow name="f"><eqn>IF TIME &gt;= 2 AND NOT a THEN STEP(1, 3) ELSE PULSE(4, 1, 2)</eqn><non_negative/></flow>
      <flow name="g"><eqn>SMTH1(s, 2) + DELAY3(f, 3) - 2^-1 MOD 3</eqn></flow>
      <aux name="a"><eqn>{a comment} SAFEDIV(TIME, DT)</eqn></aux>
      <aux name="lookup"><eqn>TIME</eqn><gf type="discrete"><xscale min="0" max="2"/><ypts>0;5;1</ypts></gf></aux>
    </variables>
  </model>
</xmile>
"#;
    let text = text.replace("<ypts>0;5;1</ypts>", "<ypts sep=\";\">0;5;1</ypts>");
    let imported = import_text(&text);
    assert!(imported.diagnostics.is_empty(), "{:?}", imported.diagnostics);
    insta::assert_snapshot!(imported.text.expect("the model imports"));
}
