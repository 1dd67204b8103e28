// output_name: the patterns `gpuscope trace -o` and `gpuscope kernels -o` expand, so that one
// command line run by every task of a job names a trace per host or per rank (as nsys does):
//   %h        the host name (characters other than letters, digits, '-', '_', '.' become '_')
//   %p        the pid of this gpuscope
//   %q{VAR}   the value of the environment variable VAR, e.g. %q{SLURM_PROCID}
//   %%        a '%'
// Under srun, `-o 'run.%h.%q{SLURM_PROCID}'` writes run.<host>.<rank>.sqlite per task.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace gpuscope::cli {

struct OutputNameContext {
  std::string_view host;
  long pid = 0;
  std::function<const char*(const char*)> getenv;  // nullptr for an unset variable
};

/// `pattern` expanded (file comment). Throws std::invalid_argument naming the problem and
/// what to write instead: an unset or empty %q variable, a %q without {NAME}, or '%' followed
/// by anything else.
[[nodiscard]] std::string expand_output_name(std::string_view pattern, const OutputNameContext& context);

/// expand_output_name with this host, this process and its environment.
[[nodiscard]] std::string expand_output_name(std::string_view pattern);

}  // namespace gpuscope::cli
