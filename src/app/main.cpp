#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>

#include "strata/run.hpp"

int main(int argc, char** argv) {
    // Past a file-size limit (ulimit -f, a batch system's) a write fails with EFBIG and the run
    // reports it, instead of the default SIGXFSZ killing it mid-file.
    std::signal(SIGXFSZ, SIG_IGN);
    return strata::cli_main(argc, argv, std::cout, std::cerr, isatty(fileno(stdout)) != 0);
}
