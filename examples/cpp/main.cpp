// heat3d from a program: build a simulation, change its state, advance it, read it back; and,
// given a stencil file, that model too (compiled at its first use, as by `strata run FILE`).
// Usage: heat_consumer [cpu|omp|cuda] [FILE.stencil]
#include <cstdio>
#include <exception>

#include "strata/core/error.hpp"
#include "strata/simulation.hpp"

int main(int argc, char** argv) try {
    strata::SimulationOptions o;
    o.model = "heat3d";
    o.params = {{"n", std::int64_t(48)}, {"stencil", std::string("27pt")}};
    o.precision = strata::Precision::fp64;
    o.backend = strata::parse_backend(argc > 1 ? argv[1] : "omp");
    strata::Simulation sim(o);

    strata::TypedEngine<double>& engine = sim.engine_as<double>();
    strata::HostField<double> u = engine.field("u");
    u.at(24, 24, 24) += 1.0;  // a hot spot on top of the model's initial state
    engine.set_field("u", u);

    sim.advance(100);
    const strata::Observables obs = engine.observables();
    std::printf("heat3d 48^3 27pt on %s (%s): step %lld, t = %.6g\n", argv[1] ? argv[1] : "omp",
                engine.kernel().c_str(), static_cast<long long>(sim.step()), sim.time());
    for (const auto& [name, value] : obs.all()) std::printf("  %s = %.9g\n", name.c_str(), value);
    sim.checkpoint("heat_consumer.ck");  // `strata run heat3d -n 48 --stencil 27pt --restart heat_consumer.ck` goes on

    if (argc > 2) {  // a stencil file is a model like the others
        strata::SimulationOptions s;
        s.model = argv[2];
        s.params = {{"n", std::int64_t(64)}};
        s.backend = o.backend;
        strata::Simulation user(s);
        user.advance(50);
        std::printf("%s on %s: step %lld\n", argv[2], argv[1], static_cast<long long>(user.step()));
        const strata::Observables figures = user.engine().observables();
        for (const auto& [name, value] : figures.all()) std::printf("  %s = %.9g\n", name.c_str(), value);
    }
    return 0;
} catch (const strata::UsageError& e) {
    std::fprintf(stderr, "heat_consumer: %s\n", e.what());
    return 2;
} catch (const std::exception& e) {
    std::fprintf(stderr, "heat_consumer: error: %s\n", e.what());
    return 1;
}
