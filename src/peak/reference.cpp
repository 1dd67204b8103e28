// PyTorch references of `gpuscope peak` (peak/reference.hpp).
#include "peak/reference.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "core/profile_report.hpp"

namespace gpuscope::peak {
namespace {

constexpr std::string_view kScript = R"PY(
import statistics, sys
sys.stdout = sys.stderr  # gpuscope's stdout carries its tables
args = sys.argv[1:]
device = int(args[args.index("--device") + 1])
out = args[args.index("--out") + 1]
lines = []
def finish(*extra):
    with open(out, "w") as f:
        f.write("\n".join(lines + list(extra)) + "\n")
    sys.exit(0)
try:
    import torch
except Exception as e:
    finish("unavailable torch is not importable (%s: %s)" % (type(e).__name__, e))
lines.append("torch " + torch.__version__)
if not torch.cuda.is_available():
    finish("unavailable torch %s sees no CUDA GPU" % torch.__version__)
torch.cuda.set_device(device)
def time_cuda(fn, reps, warmup):
    # Back to back, like gpuscope's hot timings: every rep between its own pair of events,
    # one synchronization at the end (no launch gap inside a rep).
    for _ in range(warmup):
        fn()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for start, end in events:
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    times = [start.elapsed_time(end) * 1e-3 for start, end in events]
    return min(times), statistics.median(times)
try:
    n = 4 << 30
    while 2 * n > 0.8 * torch.cuda.mem_get_info()[0] and n > (256 << 20):
        n //= 2
    src = torch.empty(n, dtype=torch.uint8, device="cuda").random_(0, 255)
    dst = torch.empty_like(src)
    best, median = time_cuda(lambda: dst.copy_(src), 10, 3)
    if torch.equal(src[-(1 << 20):], dst[-(1 << 20):]):
        lines.append("reference torch_copy dram_copy %r %r torch dst.copy_(src) of %.2f GiB uint8, read + write bytes, "
                     "CUDA events" % (2 * n / best, 2 * n / median, n / 2**30))
    del src, dst
    torch.cuda.empty_cache()
    size = 8192
    for dtype, name, ceiling in ((torch.bfloat16, "bf16", "tensor_bf16"), (torch.float16, "fp16", "tensor_fp16")):
        a = torch.randn(size, size, device="cuda", dtype=dtype)
        b = torch.randn(size, size, device="cuda", dtype=dtype)
        best, median = time_cuda(lambda: torch.matmul(a, b), 20, 10)
        flop = 2 * size ** 3
        lines.append("reference torch_matmul_%s %s %r %r torch.matmul %s %dx%dx%d, random normal inputs, CUDA events"
                     % (name, ceiling, flop / best, flop / median, name, size, size, size))
        del a, b
except Exception as e:
    lines.append("unavailable a torch reference failed (%s: %s)" % (type(e).__name__, e))
finish()
)PY";

double parse_number(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return end != nullptr && *end == '\0' && std::isfinite(v) && v > 0 ? v : kUnknown;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f" : "%.3g", v);
  return buf;
}

DisplayUnit unit_of(std::string_view ceiling) {
  const CeilingInfo* info = find_ceiling_info(ceiling);
  return display_unit(info != nullptr ? info->unit : "");
}

}  // namespace

std::string_view torch_reference_script() { return kScript; }

ReferenceRun parse_reference_output(std::string_view text) {
  ReferenceRun run;
  std::istringstream in{std::string(text)};
  std::string line;
  bool any = false;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind == "torch") {
      words >> run.torch_version;
    } else if (kind == "unavailable") {
      std::getline(words >> std::ws, run.unavailable);
      any = true;
    } else if (kind == "reference") {
      Reference r;
      std::string best, median;
      words >> r.name >> r.ceiling >> best >> median;
      std::getline(words >> std::ws, r.what);
      r.best = parse_number(best);
      r.median = parse_number(median);
      if (r.name.empty() || find_ceiling_info(r.ceiling) == nullptr || std::isnan(r.best) || std::isnan(r.median))
        continue;
      run.references.push_back(std::move(r));
      any = true;
    }
  }
  if (!any) run.unavailable = "the reference program wrote no result";
  return run;
}

std::vector<std::string> reference_warnings(const MachineProfile& profile, std::span<const Reference> references) {
  std::vector<std::string> out;
  for (const Reference& r : references) {
    const Ceiling* c = profile.find(r.ceiling);
    if (c == nullptr || !std::isfinite(c->measured) || c->measured <= 0) continue;
    if (!(r.median > c->measured * (1 + kReferenceMedianTolerance) || r.best > c->measured * (1 + kReferenceTolerance)))
      continue;
    const DisplayUnit u = unit_of(r.ceiling);
    const std::string unit(u.unit);
    out.push_back("PyTorch " + r.name + " (" + r.what + ") reached " + number(r.best * u.scale) + " " + unit +
                  " (best; median " + number(r.median * u.scale) + "), " + number(r.best / c->measured * 100) +
                  " % of the " + r.ceiling + " ceiling " + number(c->measured * u.scale) + " " + unit +
                  ": the ceiling is too low, and every verdict measured against it too generous");
  }
  return out;
}

Report reference_report(const MachineProfile& profile, const ReferenceRun& run) {
  Report r;
  r.name = "peak_references";
  r.title = "PyTorch references on the same GPU (separate process, after the ceilings)";
  r.add_column("Reference", "", ColumnType::kText)
      .add_column("Ceiling", "", ColumnType::kText)
      .add_column("Best", "", ColumnType::kReal)
      .add_column("Median", "", ColumnType::kReal)
      .add_column("Ceiling Value", "", ColumnType::kReal)
      .add_column("Unit", "", ColumnType::kText)
      .add_column("Best / Ceiling", "%", ColumnType::kReal)
      .add_column("Verdict", "", ColumnType::kText)
      .add_column("What", "", ColumnType::kText);
  const std::vector<std::string> warnings = reference_warnings(profile, run.references);
  for (const Reference& ref : run.references) {
    const DisplayUnit u = unit_of(ref.ceiling);
    const Ceiling* c = profile.find(ref.ceiling);
    const bool measured = c != nullptr && std::isfinite(c->measured) && c->measured > 0;
    std::string verdict = "no ceiling";
    if (measured) {
      const std::vector<std::string> one = reference_warnings(profile, std::span<const Reference>(&ref, 1));
      verdict = !one.empty() ? "ABOVE" : ref.best > c->measured || ref.median > c->measured ? "equal" : "below";
    }
    r.rows.push_back(Row{ref.name, ref.ceiling, ref.best * u.scale, ref.median * u.scale,
                         measured ? Cell{c->measured * u.scale} : Cell{std::monostate{}}, std::string(u.unit),
                         measured ? Cell{ref.best / c->measured * 100} : Cell{std::monostate{}}, verdict, ref.what});
  }
  if (!run.torch_version.empty()) r.add_note(NoteLevel::kInfo, "torch " + run.torch_version);
  if (!run.unavailable.empty()) r.add_note(NoteLevel::kInfo, "no PyTorch reference: " + run.unavailable);
  for (const std::string& w : warnings) r.add_note(NoteLevel::kWarning, w);
  return r;
}

}  // namespace gpuscope::peak
