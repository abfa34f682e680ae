// What a C++ test suite asks of an error: the message a call threw, and whether a text holds a
// part.
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <string_view>

/// Runs `f` and returns the message of what it threw, or "<no error>".
inline std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "<no error>";
}

/// Runs `f`, which should throw E, and returns the message; "<no error>" when it throws nothing
/// and "<other exception>" when it throws something else, so that a message check fails visibly.
template <typename E, typename F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    } catch (...) {
        return "<other exception>";
    }
    return "<no error>";
}

/// Whether `s` holds `part`.
inline bool contains(const std::string& s, std::string_view part) {
    return s.find(part) != std::string::npos;
}
