// Catch2 entry point, compiled once into a static library that every test executable links.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
