// A C++ host that imports one module through pyvalue and prints where it came from; the venv
// test (tests/python/py_in_cpp/test_embed_venv.py) runs it with and without $VIRTUAL_ENV.
#include <isthmus/py.hpp>

#include <iostream>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: venv_probe MODULE\n";
        return 2;
    }
    try {
        isthmus::pyvalue mod = isthmus::pyimport(argv[1]);
        isthmus::pyvalue sys = isthmus::pyimport("sys");
        std::cout << "file " << mod.attr("__file__").str() << "\n";
        std::cout << "prefix " << sys.attr("prefix").str() << "\n";
        std::cout << "value " << mod.attr("VALUE").str() << "\n";
    } catch (const isthmus::python_error& e) {
        std::cout << "python_error " << e.type_name() << ": " << e.message() << "\n";
        return 1;
    }
    return 0;
}
