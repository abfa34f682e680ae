// The PyQuasar manual's two-layer network trained in C++ with isthmus's own autograd (no Python).
#include <isthmus/autograd.hpp>
#include <isthmus/ops.hpp>

#include <iostream>

using namespace isthmus;

int main() {
    try {
        manual_seed(0);
        const int64_t N = 64, D_in = 1000, H = 100, D_out = 10;
        // Random input and output data, and random weights that record gradients.
        const tensor x = randn({N, D_in}, dtype::float32);
        const tensor y = randn({N, D_out}, dtype::float32);
        tensor w1 = randn({D_in, H}, dtype::float32);
        tensor w2 = randn({H, D_out}, dtype::float32);
        w1.set_requires_grad();
        w2.set_requires_grad();
        const double learning_rate = 1e-6;
        double first = 0, last = 0;
        for (int t = 0; t < 500; ++t) {
            // Forward pass: relu(x @ w1) @ w2 (relu as maximum with 0), every op recorded.
            const tensor h = matmul(x, w1);
            const tensor y_pred = matmul(where(gt(h, 0.0), h, 0.0), w2);
            const tensor loss = sum(square(sub(y_pred, y)));
            const double l = loss.item<double>();
            if (t == 0) first = l;
            last = l;
            if (t % 100 == 99) std::cout << t << ", " << l << "\n";
            // Backward: the gradients of w1 and w2.
            loss.backward();
            // Gradient descent, not recorded.
            autograd::no_grad_guard off;
            binary_inplace(binary_op::sub, w1, mul(w1.grad(), learning_rate));
            binary_inplace(binary_op::sub, w2, mul(w2.grad(), learning_rate));
            w1.set_grad(tensor());
            w2.set_grad(tensor());
        }
        std::cout << "loss: " << first << " -> " << last << " (" << first / last << "x smaller)\n";
        if (!(last * 10 <= first)) {
            std::cerr << "autograd_training: the loss did not fall by 10x\n";
            return 1;
        }
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "autograd_training: " << e.what() << "\n";
        return 1;
    }
}
