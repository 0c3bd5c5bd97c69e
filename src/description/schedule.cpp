// The classic stopping rule by simulated time (problem.hpp), shared by apf and the stencil files.
#include <cstdio>
#include <string>

#include "strata/core/error.hpp"
#include "strata/problem.hpp"

namespace strata {

TimeSchedule schedule_for_time(double dt, double t_final, const std::string& flag, const std::string& instead) {
    // Past kMaxTimedSteps the loop alone takes seconds, where t + dt == t it never ends, and a dt
    // that is not positive never reaches T.
    if (!(dt > 0)) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "%s counts steps of dt, and dt is %g: use %s", flag.c_str(), dt, instead.c_str());
        throw UsageError(buf);
    }
    if (t_final / dt > kMaxTimedSteps) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "%s %g needs %.3g steps of dt = %g, more than %.0e: use %s", flag.c_str(),
                      t_final, t_final / dt, dt, kMaxTimedSteps, instead.c_str());
        throw UsageError(buf);
    }
    TimeSchedule s;
    double t = 0;
    while (t < t_final) {
        t += dt;
        ++s.steps;
    }
    s.t_end = t;
    return s;
}

}  // namespace strata
