// The GIL: pyvalue from many C++ threads at once, destruction without the GIL, nogil regions.
#include "support.hpp"

#include <atomic>
#include <thread>
#include <vector>

using namespace isthmus;
using namespace isthmus::literals;

TEST_CASE("the main thread does not hold the GIL between operations") {
    CHECK(python::is_initialized());
    CHECK_FALSE(python::holds_gil());
    {
        python::gil g;
        CHECK(python::holds_gil());
        {
            python::nogil ng;
            CHECK_FALSE(python::holds_gil());
        }
        CHECK(python::holds_gil());
    }
    CHECK_FALSE(python::holds_gil());
    python::ensure(); // idempotent
    python::interpreter again;
    CHECK(pyeval("1 + 1").cast<int>() == 2);
}

TEST_CASE("8 threads call Python thousands of times: no deadlock, no crash, right results") {
    pyvalue g = pyexec(R"(
import threading
lock = threading.Lock()
count = 0
def work(i, k=1):
    global count
    with lock:
        count += 1
    return i * k
)");
    pyvalue work = g["work"];
    constexpr int threads = 8, iterations = 3000;
    std::atomic<int> wrong{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            for (int i = 0; i < iterations; ++i) {
                // calls, conversions, operators, temporaries destroyed on this thread
                pyvalue r = work(i, "k"_kw = t);
                if (from_py<int>(r) != i * t) ++wrong;
                pyvalue l = list(i, t);
                if ((l + list(1)).len() != 3) ++wrong;
                if (i % 500 == 0) {
                    python::nogil ng; // no-op here: this thread does not hold the GIL
                    std::this_thread::yield();
                }
            }
        });
    }
    // the main thread works at the same time, holding the GIL in bursts
    for (int i = 0; i < 200; ++i) {
        python::gil gl;
        CHECK(work(i).cast<int>() == i);
    }
    for (auto& th : pool) th.join();
    CHECK(wrong.load() == 0);
    CHECK(g["count"].cast<int>() == threads * iterations + 200);
}

TEST_CASE("pyvalues made on one thread, destroyed on another without the GIL") {
    std::vector<pyvalue> made;
    for (int i = 0; i < 1000; ++i) made.push_back(list(i, to_py("x")));
    pyvalue probe = list();
    pyvalue weak = pyimport("sys").attr("getrefcount")(probe);
    std::thread([moved = std::move(made), probe]() mutable {
        CHECK_FALSE(python::holds_gil());
        moved.clear(); // each destructor takes the GIL itself
        pyvalue p = std::move(probe);
    }).join();
    CHECK(pyimport("sys").attr("getrefcount")(probe).cast<int>() == weak.cast<int>());
}

TEST_CASE("references dropped without the GIL wait for the next taker, bounded (deferred decref)") {
    // See Note [deferred decref]: objects whose last reference a GIL-less thread drops are
    // finalised when a thread next takes the GIL through isthmus, or at
    // drop_pending_references(); past 256 waiting they are dropped at once.
    pyvalue g = pyexec(R"(
finalised = 0
class Counted:
    def __del__(self):
        global finalised
        finalised += 1
)");
    pyvalue counted = g["Counted"];
    auto finalised = [&] {
        python::gil held; // takes the GIL through isthmus: drains what waits
        return g["finalised"].cast<int>();
    };
    std::vector<pyvalue> objects;
    for (int i = 0; i < 300; ++i) objects.push_back(counted());
    std::thread([&] {
        CHECK_FALSE(python::holds_gil());
        for (int i = 0; i < 10; ++i) objects[i] = pyvalue(); // ten wait
    }).join();
    python::drop_pending_references();
    CHECK(g["finalised"].cast<int>() == 10); // read without draining: they were dropped
    int seen = 0;
    {
        python::gil held; // then released around the thread: nobody drains meanwhile
        {
            python::nogil free;
            std::thread([&] {
                objects.clear(); // 290 more: the 257th drop drains the list itself
            }).join();
        }
        seen = g["finalised"].cast<int>(); // GIL held by this scope: no draining on the way
    }
    CHECK(seen >= 10 + 257);
    CHECK(seen < 300);         // the last ones still wait
    CHECK(finalised() == 300); // the next taker drops the rest
    // a thread without the GIL can drop references at any rate: no deadlock, nothing lost
    std::vector<std::thread> pool;
    std::vector<std::vector<pyvalue>> batches(4);
    for (auto& b : batches)
        for (int i = 0; i < 500; ++i) b.push_back(counted());
    for (auto& b : batches) pool.emplace_back([&b] { b.clear(); });
    for (auto& t : pool) t.join();
    CHECK(finalised() == 2300);
}

TEST_CASE("Python threads and C++ threads interleave; nogil lets Python run") {
    pyvalue g = pyexec(R"(
import threading, time
done = []
def spin():
    for _ in range(1000):
        time.sleep(0)
    done.append(1)
t = threading.Thread(target=spin)
)");
    g["t"].attr("start")();
    {
        python::gil gl;
        python::nogil ng; // native work: Python's thread runs meanwhile
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    g["t"].attr("join")();
    CHECK(g["done"].len() == 1);
}

TEST_CASE("the GIL fast path notices every release of the GIL inside a scope") {
    // See Note [GIL fast path]: inside python::gil, operations only check that the thread still
    // holds the GIL; releasing it inside the scope (nogil, or Python code that drops it) must
    // send them back to PyGILState_Ensure.
    pyvalue g = pyexec("import time\ndef f(x):\n    return x + 1\n");
    pyvalue f = g["f"];
    python::gil held;
    CHECK(python::holds_gil());
    CHECK(f(1).cast<int>() == 2);
    {
        python::nogil free;
        CHECK_FALSE(python::holds_gil());
        // another thread can run Python meanwhile, and this one still can too
        std::thread other([&] { CHECK(f(10).cast<int>() == 11); });
        pyvalue r = f(2); // takes the GIL again itself
        CHECK(r.cast<int>() == 3);
        pyvalue copy = r; // copies and drops without the GIL
        other.join();
        CHECK_FALSE(python::holds_gil());
    }
    CHECK(python::holds_gil());
    CHECK(f(3).cast<int>() == 4);
    // a C++ callback releases the GIL and calls Python from inside
    pyvalue cb = py_function([&](int x) {
        python::nogil free;
        std::thread other([&] { CHECK(f(x).cast<int>() == x + 1); });
        other.join();
        return f(x).cast<int>() * 2;
    });
    CHECK(cb(5).cast<int>() == 12);
    CHECK(g["time"].attr("sleep")(0.0).is_none()); // Python releases and re-takes the GIL
    CHECK(f(4).cast<int>() == 5);
}
