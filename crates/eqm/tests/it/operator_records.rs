//! Operator records: a complex number record `Cplx` written here, built by its overloaded
//! constructors (`Cplx(3)`, `Cplx(1, 2 t)`, by name, and a polar constructor chosen by its
//! third argument's type) and combined by its operator functions called by name, and a second
//! record whose operators are written on records in bindings, equations, a function body and
//! arrays, against complex arithmetic done by hand; both back ends agree bit for bit.

use crate::{check, run_both_back_ends};

const CPLX: &str = "model Complexes
  operator record Cplx
    Real re;
    Real im;
    encapsulated operator 'constructor'
      function fromReal
        import Complexes.Cplx;
        input Real re;
        input Real im = 0;
        output Cplx result(re = re, im = im);
      algorithm
      end fromReal;
      function fromPolar
        import Complexes.Cplx;
        input Real len;
        input Real phi;
        input Boolean polar;
        output Cplx result(re = len*cos(phi), im = len*sin(phi));
      algorithm
      end fromPolar;
    end 'constructor';
    encapsulated operator function '+'
      import Complexes.Cplx;
      input Cplx a;
      input Cplx b;
      output Cplx c;
    algorithm
      c := Cplx(a.re + b.re, a.im + b.im);
    end '+';
    encapsulated operator '*'
      function multiply
        import Complexes.Cplx;
        input Cplx a;
        input Cplx b;
        output Cplx c;
      algorithm
        c := Cplx(a.re*b.re - a.im*b.im, a.re*b.im + a.im*b.re);
      end multiply;
    end '*';
  end Cplx;
  Cplx a = Cplx(3);
  Cplx b = Cplx(1, 2*time);
  Cplx c = Cplx(2, 0.5, true);
  Cplx d = Cplx(im = -1, re = 5);
  Cplx p = Cplx.'*'.multiply(Cplx(1, 2), Cplx(3, -time));
  Cplx s = Cplx.'+'(b, d);
end Complexes;
";

#[test]
fn overloaded_constructors_and_operator_functions_compute_complex_arithmetic() {
    let result = run_both_back_ends(
        CPLX,
        eqm::RunSettings {
            stop: Some(2.0),
            ..eqm::RunSettings::default()
        },
    );
    for t in [0.0, 0.7, 1.3, 2.0] {
        check(&result, "a.re", t, 3.0, 1e-15);
        check(&result, "a.im", t, 0.0, 1e-15);
        check(&result, "b.re", t, 1.0, 1e-15);
        check(&result, "b.im", t, 2.0 * t, 1e-15);
        check(&result, "c.re", t, 2.0 * 0.5_f64.cos(), 1e-15);
        check(&result, "c.im", t, 2.0 * 0.5_f64.sin(), 1e-15);
        check(&result, "d.re", t, 5.0, 1e-15);
        check(&result, "d.im", t, -1.0, 1e-15);
        // (1 + 2j)(3 - t j) = 3 + 2t + (6 - t) j.
        check(&result, "p.re", t, 3.0 + 2.0 * t, 1e-14);
        check(&result, "p.im", t, 6.0 - t, 1e-14);
        // (1 + 2t j) + (5 - j) = 6 + (2t - 1) j.
        check(&result, "s.re", t, 6.0, 1e-14);
        check(&result, "s.im", t, 2.0 * t - 1.0, 1e-14);
    }
}

/// A complex number record with overloaded operators, written here: `'+'` as one function,
/// `'-'` with negation and subtraction, `'*'`, `'/'`, `'=='` and `'0'`; a Real operand becomes
/// a record through the constructor.
const OPERATORS: &str = "model Operators
  operator record Cx
    Real re;
    Real im;
    encapsulated operator 'constructor'
      function fromReal
        import Operators.Cx;
        input Real re;
        input Real im = 0;
        output Cx result(re = re, im = im);
      algorithm
      end fromReal;
    end 'constructor';
    encapsulated operator function '0'
      import Operators.Cx;
      output Cx zero(re = 0, im = 0);
    algorithm
    end '0';
    encapsulated operator function '+'
      import Operators.Cx;
      input Cx a;
      input Cx b;
      output Cx c;
    algorithm
      c := Cx(a.re + b.re, a.im + b.im);
    end '+';
    encapsulated operator '-'
      function negate
        import Operators.Cx;
        input Cx a;
        output Cx c;
      algorithm
        c := Cx(-a.re, -a.im);
      end negate;
      function subtract
        import Operators.Cx;
        input Cx a;
        input Cx b;
        output Cx c;
      algorithm
        c := Cx(a.re - b.re, a.im - b.im);
      end subtract;
    end '-';
    encapsulated operator function '*'
      import Operators.Cx;
      input Cx a;
      input Cx b;
      output Cx c;
    algorithm
      c := Cx(a.re*b.re - a.im*b.im, a.re*b.im + a.im*b.re);
    end '*';
    encapsulated operator function '/'
      import Operators.Cx;
      input Cx a;
      input Cx b;
      output Cx c;
    protected
      Real d = b.re^2 + b.im^2;
    algorithm
      c := Cx((a.re*b.re + a.im*b.im)/d, (a.im*b.re - a.re*b.im)/d);
    end '/';
    encapsulated operator function '=='
      import Operators.Cx;
      input Cx a;
      input Cx b;
      output Boolean equal;
    algorithm
      equal := a.re == b.re and a.im == b.im;
    end '==';
  end Cx;
  function square \"z*z - z, with the operators inside a function\"
    input Cx z;
    output Cx y;
  protected
    Cx w;
  algorithm
    w := z*z;
    y := w - z;
  end square;
  Cx a = Cx(1, 2);
  Cx b = Cx(3, -time);
  Cx s = a + b;
  Cx d = a - b*a;
  Cx q = 1/b;
  Cx m = 2*a - a/Cx(0, 1);
  Cx n = -a;
  Cx f = square(b);
  Cx v[2] = {a, b} + {b, a};
  Cx w[2] = {a, b}*2;
  Cx p[2] = {{a, b}, {b, a}}*{a, b};
  Cx total = sum({a, b, Cx(0.5)});
  Cx g = (if time > 1 then a else b) + a;
  Boolean same = a == Cx(1, 2);
  Boolean other = b == Cx(3);
  Cx u;
equation
  u*Cx(2) + a = b;
end Operators;
";

#[test]
fn overloaded_operators_of_an_operator_record_compute_complex_arithmetic() {
    let result = run_both_back_ends(
        OPERATORS,
        eqm::RunSettings {
            stop: Some(2.0),
            ..eqm::RunSettings::default()
        },
    );
    for t in [0.0, 0.7, 1.3, 2.0] {
        // a = 1 + 2j, b = 3 - t j, by hand.
        let (ar, ai, br, bi) = (1.0, 2.0, 3.0, -t);
        let expect = |name: &str, re: f64, im: f64, tolerance: f64| {
            check(&result, &format!("{name}.re"), t, re, tolerance);
            check(&result, &format!("{name}.im"), t, im, tolerance);
        };
        expect("s", 4.0, 2.0 - t, 1e-14);
        // b a = (3 - t j)(1 + 2j) = 3 + 2t + (6 - t) j.
        expect("d", 1.0 - (3.0 + 2.0 * t), 2.0 - (6.0 - t), 1e-14);
        // 1/b = (3 + t j)/(9 + t^2), the 1 made a Cx by the constructor.
        expect("q", 3.0 / (9.0 + t * t), t / (9.0 + t * t), 1e-14);
        // 2a - a/j = 2 + 4j - (2 - j).
        expect("m", 0.0, 5.0, 1e-14);
        expect("n", -ar, -ai, 0.0);
        // b^2 - b = 9 - t^2 - 6t j - 3 + t j.
        expect("f", 9.0 - t * t - 3.0, -6.0 * t + t, 1e-13);
        expect("v[1]", ar + br, ai + bi, 1e-14);
        expect("v[2]", ar + br, ai + bi, 1e-14);
        expect("w[1]", 2.0, 4.0, 1e-14);
        expect("w[2]", 6.0, -2.0 * t, 1e-14);
        // {{a, b}, {b, a}} {a, b} = {a^2 + b^2, 2ab}; a^2 = -3 + 4j, b^2 = 9 - t^2 - 6t j.
        expect("p[1]", -3.0 + 9.0 - t * t, 4.0 - 6.0 * t, 1e-13);
        expect("p[2]", 2.0 * (3.0 + 2.0 * t), 2.0 * (6.0 - t), 1e-13);
        expect("total", 4.5, 2.0 - t, 1e-14);
        if t > 1.0 {
            expect("g", 2.0 * ar, 2.0 * ai, 1e-14);
        } else {
            expect("g", ar + br, ai + bi, 1e-14);
        }
        check(&result, "same", t, 1.0, 0.0);
        check(&result, "other", t, if t == 0.0 { 1.0 } else { 0.0 }, 0.0);
        // 2u + a = b: u = (b - a)/2, solved by Newton's method to its tolerance.
        expect("u", (br - ar) / 2.0, (bi - ai) / 2.0, 1e-7);
    }
}

/// A function of the model's own named like a built-in one (`sum`, brought in by an import, as
/// a library brings in the sum of an array of its records) is the one a call of that name
/// calls; `.sum` reaches the built-in one.
const SHADOWED_BUILTIN: &str = "package Shadow
  package Lib
    function sum \"the sum of the squares\"
      input Real v[:];
      output Real s;
    algorithm
      s := 0;
      for i in 1:size(v, 1) loop
        s := s + v[i]^2;
      end for;
    end sum;
  end Lib;
  model Uses
    import Shadow.Lib.sum;
    Real squares = sum({1, 2, 3*time});
    Real plain = .sum({1, 2, 3*time});
  end Uses;
end Shadow;
";

#[test]
fn a_function_named_like_a_built_in_one_is_called_where_it_is_in_scope() {
    let mut session = eqm::Session::with_sources(&[("m.eqm".to_string(), SHADOWED_BUILTIN.to_string())], &[], None);
    let mut model = session
        .compile(Some("Shadow.Uses"), &eqm::ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let settings = eqm::RunSettings {
        stop: Some(1.0),
        ..eqm::RunSettings::default()
    };
    let result = model.simulate(&settings).unwrap_or_else(|e| panic!("{e}"));
    for t in [0.0, 0.5, 1.0] {
        check(&result, "squares", t, 1.0 + 4.0 + 9.0 * t * t, 1e-14);
        check(&result, "plain", t, 3.0 + 3.0 * t, 1e-14);
    }
}
