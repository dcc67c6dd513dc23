//! External C functions that write their outputs through pointer arguments, as Modelica's
//! external interface passes them: an array output of a matrix-vector product, two scalar outputs of a `void`
//! function, the default call of a function with several outputs, a result returned together
//! with an output written through a pointer, an output initialised from its binding before the
//! call, a String constant and a record passed as a C struct; each checked against its closed
//! form on native code and on the interpreter, which agree bit for bit.

use crate::check;
use crate::external::{check_fails, have_cc, run_both, scratch};

const OUTPUTS: &str = r##"
function matVec
  input Real A[:, :];
  input Real x[size(A, 2)];
  output Real y[size(A, 1)];
  external "C" mat_vec(A, size(A, 1), size(A, 2), x, y) annotation(Include = "
void mat_vec(const double* A, int m, int n, const double* x, double* y) {
  for (int i = 0; i < m; ++i) { y[i] = 0.0; for (int j = 0; j < n; ++j) y[i] += A[i*n + j] * x[j]; }
}");
end matVec;

function polar
  input Real x;
  input Real y;
  output Real r;
  output Real phi;
  external "C" to_polar(x, y, r, phi) annotation(Include = "#include <math.h>
void to_polar(double x, double y, double* r, double* phi) { *r = sqrt(x*x + y*y); *phi = atan2(y, x); }");
end polar;

function sumAndProduct "the default call: inputs with their sizes, then every output"
  input Real x[:];
  output Real s;
  output Real p;
  external "C" annotation(Include = "#include <stddef.h>
void sumAndProduct(const double* x, size_t n, double* s, double* p) {
  *s = 0.0; *p = 1.0; for (size_t i = 0; i < n; ++i) { *s += x[i]; *p *= x[i]; }
}");
end sumAndProduct;

function countPositive "a result returned and an output written through a pointer"
  input Real x[:];
  output Integer n;
  output Real largest;
  external "C" n = count_positive(x, size(x, 1), largest) annotation(Include = "
int count_positive(const double* x, int len, double* largest) {
  int n = 0; *largest = x[0];
  for (int i = 0; i < len; ++i) { if (x[i] > 0.0) ++n; if (x[i] > *largest) *largest = x[i]; }
  return n;
}");
end countPositive;

function accumulate "an output with a binding holds its value when the call starts"
  input Real x;
  output Real y = 10;
  output Boolean big;
  external "C" add_to(x, y, big) annotation(Include = "void add_to(double x, double* y, int* big) { *y += x; *big = *y > 11.0; }");
end accumulate;

model Outputs
  Real A[3, 2] = [1, 2; 3, 4; 5, 6*time];
  Real v[3] = matVec(A, {time, 1});
  Real r;
  Real phi;
  Real s;
  Real p;
  Integer n = countPositive({time - 1, 2, -time});
  Real largest;
  Real y;
  Boolean big;
equation
  (r, phi) = polar(3*time, 4*time + 1);
  (s, p) = sumAndProduct({1, time, 2});
  (, largest) = countPositive({time - 1, 2, -time});
  (y, big) = accumulate(time);
end Outputs;
"##;

#[test]
fn outputs_written_through_pointers_match_closed_forms_on_both_back_ends() {
    if !have_cc() {
        return;
    }
    let dir = scratch("outputs");
    let result = run_both("outputs.eqm", OUTPUTS, &dir, 2.0);
    for t in [0.0_f64, 0.5, 1.25, 2.0] {
        check(&result, "v[1]", t, t + 2.0, 1e-15);
        check(&result, "v[2]", t, 3.0 * t + 4.0, 1e-15);
        check(&result, "v[3]", t, 5.0 * t + 6.0 * t, 1e-14);
        let (x, y) = (3.0 * t, 4.0 * t + 1.0);
        check(&result, "r", t, (x * x + y * y).sqrt(), 1e-15);
        check(&result, "phi", t, y.atan2(x), 1e-15);
        check(&result, "s", t, 3.0 + t, 1e-15);
        check(&result, "p", t, 2.0 * t, 1e-15);
        // Of {t - 1, 2, -t}: 2 is positive and the largest for t <= 3; t - 1 is positive after 1.
        check(&result, "n", t, if t > 1.0 { 2.0 } else { 1.0 }, 0.0);
        check(&result, "largest", t, 2.0, 0.0);
        check(&result, "y", t, 10.0 + t, 1e-15);
        check(&result, "big", t, if 10.0 + t > 11.0 { 1.0 } else { 0.0 }, 0.0);
    }
}

const CONSTANTS: &str = r##"
function scaledLength
  input String s;
  input Real scale;
  output Real y;
  external "C" y = scaled_length(s, scale) annotation(Include = "#include <string.h>
double scaled_length(const char* s, double scale) { return scale * (double)strlen(s); }");
end scaledLength;

function helloLength "a String literal in the external call itself"
  input Real scale;
  output Real y;
  external "C" y = scaled_length("hello", scale) annotation(Include = "#include <string.h>
double scaled_length(const char* s, double scale) { return scale * (double)strlen(s); }");
end helloLength;

function isText
  input String s;
  output Boolean same;
  external "C" same = is_text(s) annotation(Include = "#include <string.h>
int is_text(const char* s) { return strcmp(s, \"a\\\"b\\\\c?\") == 0; }");
end isText;

record Point
  Real x;
  Real y;
  Integer n;
end Point;

record Segment
  Point a;
  Real length;
end Segment;

function weighted
  input Point p;
  output Real w;
  external "C" w = weighted(p) annotation(Include = "
struct Point { double x; double y; int n; };
double weighted(const struct Point* p) { return (p->x + 2.0*p->y) * p->n; }");
end weighted;

function reach "a nested record, as a nested struct"
  input Segment s;
  output Real r;
  external "C" r = reach(s) annotation(Include = "
struct Point { double x; double y; int n; };
struct Segment { struct Point a; double length; };
double reach(const struct Segment* s) { return s->a.x + s->a.n * s->length; }");
end reach;

model Constants
  parameter String name = "pendulum";
  constant String quoted = "a\"b\\c?";
  Real y1 = scaledLength("abc", time);
  Real y2 = scaledLength(name, 2);
  Real y3 = scaledLength(quoted, 1);
  Real y4 = helloLength(time);
  Real y5 = scaledLength("é", 1);
  Boolean same = isText(quoted);
  Boolean other = isText(name);
  Real w = weighted(Point(time, 3, 2));
  Real r = reach(Segment(Point(1, 0, 4), 2*time));
end Constants;
"##;

#[test]
fn string_constants_and_records_are_passed_to_c_on_both_back_ends() {
    if !have_cc() {
        return;
    }
    let dir = scratch("constants");
    let result = run_both("constants.eqm", CONSTANTS, &dir, 1.0);
    for t in [0.0_f64, 0.5, 1.0] {
        check(&result, "y1", t, 3.0 * t, 1e-15);
        check(&result, "y2", t, 16.0, 0.0);
        // `a"b\c?` is six characters.
        check(&result, "y3", t, 6.0, 0.0);
        check(&result, "y4", t, 5.0 * t, 1e-15);
        // `é` is two bytes in UTF-8, and C's strlen counts bytes.
        check(&result, "y5", t, 2.0, 0.0);
        check(&result, "same", t, 1.0, 0.0);
        check(&result, "other", t, 0.0, 0.0);
        check(&result, "w", t, (t + 6.0) * 2.0, 1e-15);
        check(&result, "r", t, 1.0 + 4.0 * 2.0 * t, 1e-15);
    }
}

#[test]
fn a_record_argument_with_an_array_field_is_reported_at_check() {
    let dir = scratch("record-array");
    let text = r#"
record Poly
  Real c[3];
end Poly;
function f
  input Poly p;
  output Real y;
  external "C" y = g(p) annotation(Include = "double g(const void* p) { return 1.0; }");
end f;
model M
  Real y = f(Poly({1, 2, time}));
end M;
"#;
    let message = check_fails("m.eqm", text, &dir, "cc");
    assert_eq!(
        message,
        "the external function `g` of `f` cannot be provided: argument 1 is a record whose field `c` is not a Real, Integer or Boolean scalar or a record of them (Modelica maps no other field to C)"
    );
}
