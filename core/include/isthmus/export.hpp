// Symbol visibility: ISTHMUS_API marks what libisthmus exports; everything else is hidden.
#pragma once

#if defined(_WIN32)
#define ISTHMUS_API __declspec(dllexport)
#else
#define ISTHMUS_API __attribute__((visibility("default")))
#endif
