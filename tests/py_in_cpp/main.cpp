// doctest entry point for the embedded-Python suite: one interpreter for the whole executable.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <isthmus/python.hpp>

int main(int argc, char** argv) {
    isthmus::python::interpreter py; // started once; never finalised (Note [never finalise])
    doctest::Context ctx(argc, argv);
    return ctx.run();
}
