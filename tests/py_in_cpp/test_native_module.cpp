// The native module `isthmus._isthmus` inside a C++ host: loaded from this very library.
#include "support.hpp"

#include <fstream>
#include <set>

using namespace isthmus;

TEST_CASE("import_isthmus registers the module from the loaded library, once") {
    pyvalue m = python::import_isthmus();
    CHECK(m.hasattr("qvalue"));
    CHECK(m.hasattr("init"));
    CHECK(python::import_isthmus().is(m)); // the same module object the second time
    CHECK(pyimport("isthmus._isthmus").is(m));
    // the module's file is the library this process already mapped (no second copy)
    const std::string file =
        pyimport("os.path").attr("realpath")(m.attr("__file__")).cast<std::string>();
    std::ifstream maps("/proc/self/maps");
    std::string line;
    int mapped_as_isthmus = 0;
    std::set<std::string> isthmus_files;
    while (std::getline(maps, line))
        if (contains(line, "libisthmus")) isthmus_files.insert(line.substr(line.find('/')));
    CHECK(isthmus_files.size() == 1);
    for (const auto& f : isthmus_files)
        if (pyimport("os.path").attr("realpath")(f).cast<std::string>() == file)
            ++mapped_as_isthmus;
    CHECK(mapped_as_isthmus == 1);
    // runtime values that need the qvalue class convert through it
    m.attr("init")("cpu");
    pyvalue q = m.attr("zeros")(2, 3);
    CHECK(q.type_name() == "qvalue");
    value v = from_py<value>(q);
    CHECK(v.is_tensor());
    CHECK(v.as_tensor().shape() == shape_t{2, 3});
    tensor t = from_py<tensor>(q);
    t.fill(4.0);
    CHECK(v.as_tensor().at<float>({1, 1}) == 4.0f); // the same tensor
}
