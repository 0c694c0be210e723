// Catch2 entry point, compiled into every test executable.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
