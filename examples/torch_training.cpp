// The PyQuasar manual's PyTorch example from C++: a two-layer network fitted to random data.
#include <isthmus/py.hpp>

#include <iostream>

using namespace isthmus;
using namespace isthmus::literals;

int main() {
    try {
        python::interpreter interp;
        pyvalue torch;
        try {
            torch = pyimport("torch");
        } catch (const python_error& e) {
            std::cout << "torch_training: skipped, PyTorch is not installed (" << e.message()
                      << ")\n";
            return 0;
        }
        pyvalue nn = pyimport("torch.nn");
        torch.attr("manual_seed")(0);

        pyvalue dtype = torch.attr("float32");
        pyvalue device = torch.attr("device")("cpu");
        const int N = 64, D_in = 1000, H = 100, D_out = 10;

        // Random input and output data, and random weights that record gradients.
        pyvalue x = torch.attr("randn")(N, D_in, "device"_kw = device, "dtype"_kw = dtype);
        pyvalue y = torch.attr("randn")(N, D_out, "device"_kw = device, "dtype"_kw = dtype);
        pyvalue w1 = torch.attr("randn")(D_in, H, "device"_kw = device, "dtype"_kw = dtype,
                                         "requires_grad"_kw = pybool(true));
        pyvalue w2 = torch.attr("randn")(H, D_out, "device"_kw = device, "dtype"_kw = dtype,
                                         "requires_grad"_kw = pybool(true));

        const double learning_rate = 1e-6;
        pyfunction relu = pyfunc(nn.attr("ReLU")("inplace"_kw = pybool(false)));
        double first = 0, last = 0;
        for (int t = 0; t < 500; ++t) {
            // Forward pass: predicted y.
            pyvalue y_pred = relu(x.attr("mm")(w1)).attr("mm")(w2);
            // Loss, printed every 100 steps.
            pyvalue loss = pow(y_pred - y, 2).attr("sum")();
            const double l = loss.attr("item")().cast<double>();
            if (t == 0) first = l;
            last = l;
            if (t % 100 == 99) std::cout << t << ", " << l << "\n";
            // Autograd computes the gradients of w1 and w2.
            loss.attr("backward")();
            // Gradient descent without recording it: torch.no_grad() via enter/exit.
            pyvalue no_grad = torch.attr("no_grad")();
            no_grad.enter();
            w1 -= w1.attr("grad") * learning_rate;
            w2 -= w2.attr("grad") * learning_rate;
            w1.attr("grad").attr("zero_")();
            w2.attr("grad").attr("zero_")();
            no_grad.exit();
        }
        std::cout << "loss: " << first << " -> " << last << " (" << first / last << "x smaller)\n";
        if (!(last * 10 <= first)) {
            std::cerr << "torch_training: the loss did not fall by 10x\n";
            return 1;
        }
        return 0;
    } catch (const python_error& e) {
        std::cerr << "torch_training: " << e.what() << "\n" << e.traceback();
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "torch_training: " << e.what() << "\n";
        return 1;
    }
}
