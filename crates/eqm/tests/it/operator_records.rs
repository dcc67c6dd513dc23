//! Operator records: a complex number record `Cplx` written here, built by its overloaded
//! constructors (`Cplx(3)`, `Cplx(1, 2 t)`, by name, and a polar constructor chosen by its
//! third argument's type) and combined by its operator functions called by name, against
//! complex arithmetic done by hand; both back ends agree bit for bit.

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
