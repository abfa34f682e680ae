// A torch.compile'd module called from C++ through the embedded interpreter, on runtime tensors.
//
//   torch_compile [backend]    backend: inductor (default), aot_eager or eager
//
// C++ builds a small torch.nn module, compiles it with torch.compile(fullgraph=True), and feeds
// it tensors made by the runtime (shared with torch, no copies); the results come back as
// runtime tensors and are checked against the eager module.
#include <isthmus/isthmus.hpp>
#include <isthmus/py.hpp>

#include <cmath>
#include <iostream>
#include <string>

using namespace isthmus;
using namespace isthmus::literals;

int main(int argc, char** argv) {
    const std::string backend = argc > 1 ? argv[1] : "inductor";
    try {
        python::interpreter interp;
        pyvalue torch;
        try {
            torch = pyimport("torch");
        } catch (const python_error& e) {
            std::cout << "torch_compile: skipped, PyTorch is not installed\n";
            return 0;
        }
        pyvalue nn = pyimport("torch.nn");
        torch.attr("manual_seed")(0);

        // The module: 16 -> 32 -> 4 with a tanh between.
        pyvalue model = nn.attr("Sequential")(nn.attr("Linear")(16, 32), nn.attr("Tanh")(),
                                              nn.attr("Linear")(32, 4));
        model.attr("eval")();
        pyfunction compiled = pyfunc(
            torch.attr("compile")(model, "backend"_kw = backend, "fullgraph"_kw = pybool(true)));
        pyfunction eager = pyfunc(model);

        // Inputs from the runtime: sin(0.1 k) in 8 rows of 16, shared with torch (no copy).
        tensor x = sin(arange(0, 128, 1, dtype::float32, MEMRESOURCE_CPU) * 0.1).reshape({8, 16});
        pyvalue no_grad = torch.attr("no_grad")();
        no_grad.enter();
        pyvalue xt = to_torch(x);
        tensor y = from_py<tensor>(compiled(xt)); // a view of torch's result, no copy
        tensor want = from_py<tensor>(eager(xt));
        no_grad.exit();

        double worst = 0;
        for (int64_t i = 0; i < 8; ++i)
            for (int64_t j = 0; j < 4; ++j)
                worst = std::max(worst, static_cast<double>(std::abs(y.at<float>({i, j}) -
                                                                     want.at<float>({i, j}))));
        std::cout << "torch.compile(backend=\"" << backend << "\") of " << model << "\noutput "
                  << shape_str(y.shape()) << ", largest difference to eager " << worst << "\n";
        if (!(worst <= 1e-5)) {
            std::cerr << "torch_compile: the compiled module disagrees with the eager one\n";
            return 1;
        }
        return 0;
    } catch (const python_error& e) {
        std::cerr << "torch_compile: " << e.what() << "\n" << e.traceback();
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "torch_compile: " << e.what() << "\n";
        return 1;
    }
}
