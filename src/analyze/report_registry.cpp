#include "analyze/report_registry.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "analyze/memory/cuda_memory_report.hpp"
#include "analyze/metrics/gpu_metrics_report.hpp"
#include "analyze/nsys/gpu_util_report.hpp"
#include "analyze/nsys/launch_reports.hpp"
#include "analyze/llm/llm_reports.hpp"
#include "analyze/nsys/memcpy_check.hpp"
#include "analyze/comm/nccl_reports.hpp"
#include "analyze/nsys/nsys_reports.hpp"
#include "analyze/nsys/nvtx_gpu_proj.hpp"
#include "analyze/pytorch/pytorch_reports.hpp"
#include "analyze/python/py_sample_reports.hpp"
#include "analyze/nsys/top_report.hpp"
#include "analyze/timeline/judged_window.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using store::Database;
using Reports = std::vector<Report>;

Reports one(Report r) {
  Reports out;
  out.push_back(std::move(r));
  return out;
}

// docs/stats.md has the columns of each.
constexpr ReportEntry kReports[] = {
    {"top", "the five numbers that matter, the top kernels and the diagnoses that fired", true,
     [](Database& db, const ReportOptions& o) { return top(db, o); }},
    {"cuda_api_sum", "which CUDA API calls take the CPU's time (per function: total, count, avg..stddev)", false,
     [](Database& db, const ReportOptions&) { return one(cuda_api_sum(db)); }},
    {"cuda_gpu_kern_sum", "which kernels take the GPU's time (per kernel name; --base / --mangled names)", false,
     [](Database& db, const ReportOptions& o) { return one(cuda_gpu_kern_sum(db, o)); }},
    {"cuda_gpu_mem_time_sum", "how long memcpy/memset take, per kind (Host-to-Device, ..., memset)", false,
     [](Database& db, const ReportOptions&) { return one(cuda_gpu_mem_time_sum(db)); }},
    {"cuda_gpu_mem_size_sum", "how many MB each memcpy/memset kind moves", false,
     [](Database& db, const ReportOptions&) { return one(cuda_gpu_mem_size_sum(db)); }},
    {"nvtx_sum", "how long your NVTX ranges (steps, layers) take on the CPU", false,
     [](Database& db, const ReportOptions&) { return one(nvtx_sum(db)); }},
    {"nvtx_gpu_proj_sum", "the GPU time of the kernels launched inside each NVTX range", false,
     [](Database& db, const ReportOptions&) { return one(nvtx_gpu_proj_sum(db)); }},
    {"gpu_util", "is the GPU busy, and do its kernels fill the SMs? (busy % vs SM coverage, idle gaps)", false,
     [](Database& db, const ReportOptions&) { return one(gpu_util(db)); }},
    {"launch_overhead", "is the run launch-bound? (CPU launch time vs GPU time, queue delay, graph saving)", false,
     [](Database& db, const ReportOptions&) { return one(launch_overhead(db)); }},
    {"sync_wait", "where does the CPU block on the GPU? (synchronize calls, blocking copies)", false,
     [](Database& db, const ReportOptions&) { return one(sync_wait(db)); }},
    {"memcpy_check", "are copies slow? (pageable vs pinned, GB/s per kind, small transfers)", false,
     [](Database& db, const ReportOptions&) { return one(memcpy_check(db)); }},
    {"cuda_memory", "GPU memory in use: peak per GPU, when, which call; per step (--cuda-memory-usage)", false,
     [](Database& db, const ReportOptions&) { return one(cuda_memory(db)); }},
    {"gpu_metrics_sum", "what the GPU's sampled counters saw per kernel: SM, tensor, DRAM activity (--gpu-metrics)",
     false, [](Database& db, const ReportOptions& o) { return one(gpu_metrics_sum(db, o)); }},
    {"cuda_gpu_sum", "kernels and memory operations in one table", false,
     [](Database& db, const ReportOptions& o) { return one(cuda_gpu_sum(db, o)); }},
    {"cuda_gpu_trace", "one row per kernel/memcpy/memset, for scripts", false,
     [](Database& db, const ReportOptions& o) { return one(cuda_gpu_trace(db, o)); }},
    {"cuda_api_trace", "one row per CUDA API call, for scripts", false,
     [](Database& db, const ReportOptions& o) { return one(cuda_api_trace(db, o)); }},
    {"op_sum", "PyTorch: which operators take the GPU's time, forward and backward (--pytorch=ops)", false,
     [](Database& db, const ReportOptions&) { return one(op_sum(db)); }},
    {"module_sum", "PyTorch: which layers (nn.Module paths) take the GPU's time (--pytorch=modules)", false,
     [](Database& db, const ReportOptions&) { return one(module_sum(db)); }},
    {"step_sum",
     "Each step's time, GPU busy and launches (PyTorch steps, NVTX step ranges or iterations); warm-up vs steady",
     false,
     [](Database& db, const ReportOptions&) {
       const JudgedWindow j = judged_window(db, true);
       return one(step_sum(j.steps, step_source_name(j.source)));
     }},
    {"py_sum",
     "Python: where each thread spent its time, per line: self and total samples, est. time (--python-sampling)", false,
     [](Database& db, const ReportOptions&) { return one(py_sum(db)); }},
    {"gpu_idle_py", "Python: which line each thread was on while the GPU sat idle (--python-sampling)", false,
     [](Database& db, const ReportOptions&) { return one(gpu_idle_py(db)); }},
    {"llm_sum", "PyTorch: each generation of a generate loop: TTFT, TPOT (mean, p50/p90/p99), tokens/s, batch, lengths",
     false, [](Database& db, const ReportOptions&) { return one(llm_sum(db)); }},
    {"llm_step_sum",
     "PyTorch: each generation's prefill and decode steps: CPU time by cause (launches, sync, module "
     "loading, allocation, operators, Python) against GPU work",
     false, [](Database& db, const ReportOptions&) { return one(llm_step_sum(db)); }},
    {"nccl_sum", "NCCL: time, size and algbw/busbw (GB/s) per collective and message size, against the link ceiling",
     false, [](Database& db, const ReportOptions&) { return one(nccl_sum(db)); }},
    {"comm_overlap",
     "many GPUs: per rank and step, how much communication hides behind compute and how much is exposed", false,
     [](Database& db, const ReportOptions&) { return one(comm_overlap(db)); }},
    {"rank_sum", "many GPUs: per rank busy, idle and communication time, and the step time's spread across ranks",
     false, [](Database& db, const ReportOptions&) { return one(rank_sum(db)); }},
    {"stragglers", "many GPUs: which rank arrives last at the collectives and holds the others back, from which step",
     false, [](Database& db, const ReportOptions&) { return one(stragglers(db)); }},
    {"collective_trace", "many GPUs: one row per NCCL collective instance: who arrived last, by how much, the waits",
     false, [](Database& db, const ReportOptions& o) { return one(collective_trace(db, o.first_rows)); }},
};

}  // namespace

std::span<const ReportEntry> report_registry() { return kReports; }

std::vector<std::string_view> report_names() {
  std::vector<std::string_view> names;
  for (const ReportEntry& e : kReports)
    if (e.in_default) names.push_back(e.name);
  return names;
}

std::vector<std::string_view> all_report_names() {
  std::vector<std::string_view> names;
  for (const ReportEntry& e : kReports) names.push_back(e.name);
  return names;
}

std::string_view report_description(std::string_view report) {
  for (const ReportEntry& e : kReports)
    if (e.name == report) return e.description;
  return {};
}

std::vector<Report> run_report(Database& db, std::string_view name, const ReportOptions& options) {
  for (const ReportEntry& e : kReports)
    if (e.name == name) return e.run(db, options);
  std::string valid;
  for (const ReportEntry& e : kReports) valid += (valid.empty() ? "" : ", ") + std::string(e.name);
  throw std::invalid_argument("unknown report '" + std::string(name) + "' (valid: " + valid + ")");
}

}  // namespace gpuscope::analyze
