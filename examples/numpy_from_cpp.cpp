// The PyQuasar manual's NumPy example, written in C++ with pyvalue.
#include <isthmus/py.hpp>

#include <iostream>

using namespace isthmus;
using namespace isthmus::literals;

int main() {
    try {
        python::interpreter interp; // starts Python (or attaches to it); never finalised
        pyvalue py = builtins();
        pyvalue np = pyimport("numpy");

        pyvalue v = np.attr("array")(list(1, 2, 3)); // v has shape (3,)
        pyvalue w = np.attr("array")(list(4, 5));    // w has shape (2,)

        // keyword arguments: print("v", v, sep="=")
        py.attr("print")("v", v, "sep"_kw = "=");

        // The outer product by broadcasting: reshape v to a column (3, 1), times w (2,) gives
        // (3, 2). np.reshape wants Python ints, hence pyint.
        pyvalue outer = np.attr("reshape")(v, pyint({3, 1})) * w;
        py.attr("print")(outer);

        // The same through pyvalue's other operators and NumPy's own function.
        py.attr("print")("np.outer agrees:", np.attr("array_equal")(outer, np.attr("outer")(v, w)));
        py.attr("print")("v . v =", matmul(v, v), " -v =", -v, " v ** 2 =", pow(v, 2));
        // A runtime tensor made in C++ is the same memory NumPy sees.
        tensor t = tensor::from_vector(std::vector<double>{1.5, 2.5, 3.5});
        pyvalue a = to_py(t);
        a *= 2; // NumPy's in-place multiply writes the tensor
        std::cout << "tensor after NumPy's a *= 2: " << t << "\n";
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "numpy_from_cpp: " << e.what() << "\n";
        return 1;
    }
}
