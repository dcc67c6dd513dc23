//! Arrays of a model as FMI 3 arrays: one variable per array with a `Dimension` per
//! dimension and its start values row-major, read, written and differentiated with one value
//! per element through FMPy (an independent importer), checked against the closed form of
//! `x_i' = -k_i x_i`; FMI 2 keeps the elements as scalars. The FMPy tests need `python3` with
//! `fmpy`; without them each says so and passes.

use super::exported_as;
use super::fmpy::python;
use eqm::fmi::FmiVersion;

const ARRAYS: &str = "model Arrays
  parameter Real k[3] = {1, 2, 3};
  parameter Real A[2, 2] = [1, 2; 3, 4];
  input Real u[2](each start = 0);
  Real x[3](each start = 1, each fixed = true);
  output Real y[2];
equation
  for i in 1:3 loop
    der(x[i]) = -k[i]*x[i];
  end for;
  y = A*{x[1], x[2]} + u;
end Arrays;";

/// The FMI 3 description declares each array once, with its dimensions and its start values
/// row-major (`A = [1, 2; 3, 4]` is `1 2 3 4`), the derivatives of `x` as the array `der(x)`,
/// and the output `y` in the model structure with the arrays it depends on; FMI 2 lists the
/// elements one by one.
#[test]
fn an_fmi_3_description_declares_each_array_once_with_its_dimensions() {
    let (dir, _) = exported_as(ARRAYS, "Arrays", FmiVersion::Fmi3);
    let xml = std::fs::read_to_string(dir.join("modelDescription.xml")).unwrap();
    let element = |name: &str| {
        let at = xml
            .find(&format!("name=\"{name}\""))
            .unwrap_or_else(|| panic!("no {name} in {xml}"));
        let open = xml[..at].rfind('<').unwrap();
        let close = xml[at..].find("/>\n    <").map_or(xml.len(), |e| at + e);
        xml[open..close].to_string()
    };
    let a = element("A");
    assert!(
        a.contains("start=\"1 2 3 4\"") && a.matches("<Dimension start=\"2\"").count() == 2,
        "{a}"
    );
    let k = element("k");
    assert!(
        k.contains("start=\"1 2 3\"") && k.contains("<Dimension start=\"3\""),
        "{k}"
    );
    assert!(element("x").contains("<Dimension start=\"3\""));
    assert!(
        !xml.contains("name=\"x[1]\"") && !xml.contains("name=\"der(x[2])\""),
        "{xml}"
    );
    let vr = |name: &str| super::reference(&dir, name);
    assert!(element("der(x)").contains(&format!("derivative=\"{}\"", vr("x"))));
    let output = format!("<Output valueReference=\"{}\" dependencies=\"", vr("y"));
    let deps = &xml[xml.find(&output).unwrap_or_else(|| panic!("{xml}")) + output.len()..];
    let deps: Vec<u32> = deps[..deps.find('"').unwrap()]
        .split(' ')
        .map(|d| d.parse().unwrap())
        .collect();
    let mut expected = vec![vr("u"), vr("x")];
    expected.sort_unstable();
    assert_eq!(deps, expected);
    let (dir2, _) = exported_as(ARRAYS, "Arrays", FmiVersion::Fmi2);
    let xml2 = std::fs::read_to_string(dir2.join("modelDescription.xml")).unwrap();
    assert!(xml2.contains("name=\"A[2,1]\"") && !xml2.contains("Dimension"));
}

/// FMPy validates the description, reads the shapes, and simulates (Co-Simulation, and Model
/// Exchange with its own solver) with the array `k` set to `{2, 3, 4}` as one start value:
/// every row's `x` is `exp(-k t)` element by element and `y` is `A·(x1, x2)`.
#[test]
fn fmpy_simulates_with_arrays_set_and_recorded_whole() {
    simulated_with_arrays("CoSimulation", 1e-7);
    simulated_with_arrays("ModelExchange", 1e-5);
}

/// [`fmpy_simulates_with_arrays_set_and_recorded_whole`] as `kind`, to `tolerance`.
fn simulated_with_arrays(kind: &str, tolerance: f64) {
    let (dir, _) = exported_as(ARRAYS, "Arrays", FmiVersion::Fmi3);
    let script = format!(
        "import fmpy\nfrom fmpy.validation import validate_fmu\nfrom fmpy import read_model_description\nd = {dir:?}\n\
problems = validate_fmu(d)\nassert not problems, problems\n\
shapes = {{v.name: v.shape for v in read_model_description(d).modelVariables}}\n\
print(shapes['A'], shapes['x'], shapes['der(x)'], shapes['y'], 'x[1]' in shapes)\n\
r = fmpy.simulate_fmu(d, fmi_type={kind:?}, stop_time=1.0, output_interval=0.1, relative_tolerance=1e-10, start_values={{'k': [2.0, 3.0, 4.0]}}, output=['x', 'y'])\n\
for row in r: print(repr(float(row['time'])), *[repr(float(v)) for v in row['x']], *[repr(float(v)) for v in row['y']])\n",
        dir = dir.display().to_string(),
    );
    let Some(out) = python(&script) else { return };
    let out = out.unwrap_or_else(|e| panic!("FMPy failed: {e}"));
    let mut lines = out.lines();
    assert_eq!(lines.next().unwrap(), "(2, 2) (3,) (3,) (2,) False");
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(' ').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert!(rows.len() >= 11, "{kind}: {} rows", rows.len());
    for row in &rows {
        let t = row[0];
        let x: Vec<f64> = [2.0f64, 3.0, 4.0].iter().map(|k| (-k * t).exp()).collect();
        for i in 0..3 {
            assert!(
                (row[1 + i] - x[i]).abs() < tolerance,
                "{kind}: x[{}]({t}) = {}, closed form {}",
                i + 1,
                row[1 + i],
                x[i]
            );
        }
        let y = [x[0] + 2.0 * x[1], 3.0 * x[0] + 4.0 * x[1]];
        assert!(
            (row[4] - y[0]).abs() < tolerance && (row[5] - y[1]).abs() < tolerance,
            "{kind}: y({t}) = {row:?}"
        );
    }
}

/// Through FMPy's calls: an input array set whole after the initialization moves `y` by it; a
/// getter whose `nValues` does not count every element is refused; the directional derivative
/// of `der(x)` along `x` with the seed `(1, 0, 0)` is `(-k1, 0, 0)`, one value per element.
#[test]
fn array_values_are_set_got_and_differentiated_element_by_element() {
    let (dir, _) = exported_as(ARRAYS, "Arrays", FmiVersion::Fmi3);
    let script = format!(
        "from fmpy import read_model_description\nfrom fmpy.fmi3 import FMU3Slave\nfrom fmpy.fmi1 import FMICallException\nd = {dir:?}\n\
md = read_model_description(d)\nvr = {{v.name: v.valueReference for v in md.modelVariables}}\n\
cs = FMU3Slave(guid=md.guid, unzipDirectory=d, modelIdentifier='Arrays', instanceName='a')\ncs.instantiate()\n\
cs.enterInitializationMode(tolerance=1e-10, startTime=0.0, stopTime=1.0)\ncs.exitInitializationMode()\n\
cs.doStep(0.0, 0.5)\ncs.setFloat64([vr['u']], [0.5, -1.0])\n\
print(*cs.getFloat64([vr['x'], vr['y']], 5))\n\
print(*cs.getDirectionalDerivative([vr['der(x)']], [vr['x']], [1.0, 0.0, 0.0], 3))\n\
try:\n    cs.getFloat64([vr['x']], 2)\n    print('read')\nexcept FMICallException as e:\n    print('refused', e.status)\n",
        dir = dir.display().to_string(),
    );
    let Some(out) = python(&script) else { return };
    let out = out.unwrap_or_else(|e| panic!("FMPy failed: {e}"));
    let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with('[')).collect();
    let values: Vec<f64> = lines[0].split(' ').map(|v| v.parse().unwrap()).collect();
    let x: Vec<f64> = [1.0f64, 2.0, 3.0].iter().map(|k| (-k * 0.5).exp()).collect();
    for i in 0..3 {
        assert!((values[i] - x[i]).abs() < 1e-8, "x = {values:?}");
    }
    assert!((values[3] - (x[0] + 2.0 * x[1] + 0.5)).abs() < 1e-8, "y = {values:?}");
    assert!(
        (values[4] - (3.0 * x[0] + 4.0 * x[1] - 1.0)).abs() < 1e-8,
        "y = {values:?}"
    );
    let d: Vec<f64> = lines[1].split(' ').map(|v| v.parse().unwrap()).collect();
    assert!((d[0] + 1.0).abs() < 1e-9 && d[1] == 0.0 && d[2] == 0.0, "{d:?}");
    assert_eq!(lines[2], "refused 3");
}
