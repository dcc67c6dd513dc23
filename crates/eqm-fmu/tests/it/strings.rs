//! String parameters and constants in FMUs of both versions, through FMPy (an independent
//! importer): declared as `String` variables with their texts (FMI 2's `start` attribute, FMI
//! 3's `Start` element), read with `GetString` in every phase, and refused by `SetString` with
//! the reason, since a String parameter's text is part of the compiled model. The tests need
//! `python3` with `fmpy`; without them each says so and passes.

use super::exported_as;
use super::fmpy::python;
use eqm::fmi::FmiVersion;

const LABELS: &str = "model Labels
  parameter String label = \"tank A & <B>\" \"the tank's name\";
  constant String kind = \"liquid\";
  parameter Real k = 2;
  Real x(start = 1, fixed = true);
equation
  der(x) = -k*x;
end Labels;";

/// FMPy validates the description of each version, finds `label` a fixed String parameter
/// and `kind` a String constant with their texts (the XML's escaping undone), reads the texts
/// before the initialization and after a step (where `x = exp(-2 t)` shows the model ran), and
/// gets an error status with the reason logged when it sets one.
#[test]
fn string_parameters_are_read_with_their_texts_and_refuse_new_ones() {
    for (version, v) in [(FmiVersion::Fmi2, "2"), (FmiVersion::Fmi3, "3")] {
        let (dir, _) = exported_as(LABELS, "Labels", version);
        let script = format!(
            r#"from fmpy import read_model_description
from fmpy.validation import validate_fmu
from fmpy.fmi{v} import FMU{v}Slave
from fmpy.fmi1 import FMICallException
d = {dir:?}
problems = validate_fmu(d)
assert not problems, problems
md = read_model_description(d)
var = {{x.name: x for x in md.modelVariables}}
for name in ['label', 'kind']:
    x = var[name]
    print(x.type, x.causality, x.variability, x.start, x.description)
vr = [var['label'].valueReference, var['kind'].valueReference]
fmi3 = {v} == 3
cs = FMU{v}Slave(guid=md.guid, unzipDirectory=d, modelIdentifier='Labels', instanceName='s')
cs.instantiate()
text = lambda: [t.decode() if isinstance(t, bytes) else t for t in cs.getString(vr)]
print(*text(), sep='|')
if fmi3:
    cs.enterInitializationMode(startTime=0.0, stopTime=1.0)
else:
    cs.setupExperiment(startTime=0.0, stopTime=1.0)
    cs.enterInitializationMode()
cs.exitInitializationMode()
cs.doStep(0.0, 0.5)
x = (cs.getFloat64 if fmi3 else cs.getReal)([var['x'].valueReference])[0]
print(*text(), repr(x), sep='|')
try:
    cs.setString(vr[:1], ['tank C'])
    print('set')
except FMICallException as e:
    print('refused', e.status)
print(*text(), sep='|')
"#,
            dir = dir.display().to_string(),
        );
        let Some(out) = python(&script) else { return };
        let out = out.unwrap_or_else(|e| panic!("FMPy (FMI {v}) failed: {e}"));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0], "String parameter fixed tank A & <B> the tank's name",
            "FMI {v}"
        );
        assert_eq!(lines[1], "String local constant liquid None", "FMI {v}");
        assert_eq!(lines[2], "tank A & <B>|liquid", "FMI {v}");
        let after: Vec<&str> = lines[3].split('|').collect();
        assert_eq!(&after[..2], ["tank A & <B>", "liquid"], "FMI {v}");
        let x: f64 = after[2].parse().unwrap();
        assert!((x - (-1.0f64).exp()).abs() < 1e-6, "FMI {v}: x(0.5) = {x}");
        assert!(
            lines[4].contains("`label` is a fixed String parameter") && lines[5] == "refused 3",
            "FMI {v}: {lines:?}"
        );
        assert_eq!(lines[6], "tank A & <B>|liquid", "FMI {v}");
    }
}
