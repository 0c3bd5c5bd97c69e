#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "strata/run.hpp"

int main(int argc, char** argv) {
    return strata::cli_main(argc, argv, std::cout, std::cerr, isatty(fileno(stdout)) != 0);
}
