#pragma once
#include "strata/engine.hpp"

namespace strata::cpu {

template <class T>
std::unique_ptr<ApfEngine<T>> make_apf_engine(bool parallel, const ApfParams& p, ApfFields<T> initial);
template <class T>
std::unique_ptr<HeatEngine<T>> make_heat_engine(bool parallel, const HeatParams& p, HostField<T> initial);

template <class T>
std::unique_ptr<WaveEngine<T>> make_wave_engine(bool parallel, const WaveProblem<T>& p, WaveState<T> initial);

}  // namespace strata::cpu
