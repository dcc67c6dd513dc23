// The first model of an introductory Modelica text: one state relaxing towards 1, in a package
// that declares the Modelica Standard Library version it was written for. It uses no class of
// that library, so compiling it measures a compiler's fixed cost.
within ;
package Textbook
  package BasicEquations
    package SimpleExample
      model FirstOrder "x relaxes from 2 towards 1 with time constant 1"
        Real x "State";
      initial equation
        x = 2;
      equation
        der(x) = 1 - x;
      end FirstOrder;
    end SimpleExample;
  end BasicEquations;
  annotation(uses(Modelica(version="4.0.0")));
end Textbook;
