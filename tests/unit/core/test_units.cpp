// core/units and core/table_units: one spelling and one rounding rule per unit; every case computable by hand.
#include "core/units.hpp"
#include "core/table_units.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace gpuscope::core::units {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Units, ZeroHasNoPrefix) {
  EXPECT_EQ(duration(0), "0 s");
  EXPECT_EQ(duration_ns(0), "0 s");
  EXPECT_EQ(bytes(0), "0 B");
  EXPECT_EQ(byte_rate(0), "0 B/s");
  EXPECT_EQ(si(0, ""), "0");
  EXPECT_EQ(percent(0), "0.0 %");
  EXPECT_EQ(real3(0), "0.00");
  EXPECT_EQ(ns_count(0), "0 ns");
}

TEST(Units, DurationsUseSiPrefixesAndMicroSign) {
  EXPECT_EQ(duration_ns(1), "1 ns");
  EXPECT_EQ(duration_ns(999), "999 ns");
  EXPECT_EQ(duration_ns(1000), "1 µs");  // never "us"
  EXPECT_EQ(duration_ns(1500), "1.5 µs");
  EXPECT_EQ(duration_ns(45'000), "45 µs");
  EXPECT_EQ(duration_ns(76'500), "76.5 µs");
  EXPECT_EQ(duration_ns(1'500'000), "1.5 ms");
  EXPECT_EQ(duration_ns(4'567'000), "4.57 ms");  // 3 significant digits
  EXPECT_EQ(duration(1.5e-3), "1.5 ms");
  EXPECT_EQ(duration(2.46e-6), "2.46 µs");
  EXPECT_EQ(duration(13.483605), "13.5 s");
  EXPECT_EQ(duration(120), "120 s");  // no "k s": the prefix stays SI
  EXPECT_EQ(duration(1e-12), "1 ps");
}

TEST(Units, RoundingCarriesIntoTheNextPrefix) {
  EXPECT_EQ(duration_ns(999'600), "1 ms");  // not "1000 µs"
  EXPECT_EQ(duration_ns(999'400), "999 µs");
  EXPECT_EQ(si(999.6, "B"), "1 kB");
  EXPECT_EQ(si(9.996, "s"), "10 s");
  EXPECT_EQ(si(99.96, "s"), "100 s");
}

TEST(Units, SignificantDigits) {
  EXPECT_EQ(duration_ns(1'234'567'890, 6), "1.23457 s");
  EXPECT_EQ(duration_ns(250'000'000, 6), "250 ms");
  EXPECT_EQ(si(3.352e12, "B/s", 2), "3.4 TB/s");
  EXPECT_EQ(si(3.352e12, "B/s", 0), "3 TB/s");  // fewer than 1 digit: 1
}

TEST(Units, BytesAreDecimal) {
  EXPECT_EQ(bytes(512), "512 B");
  EXPECT_EQ(bytes(1000), "1 kB");
  EXPECT_EQ(bytes(1024), "1.02 kB");
  EXPECT_EQ(bytes(1073741824.0), "1.07 GB");  // 2^30
  EXPECT_EQ(bytes(48 * 1024), "49.2 kB");
}

TEST(Units, MemorySizesAreBinary) {
  EXPECT_EQ(memory_size(0), "0 B");
  EXPECT_EQ(memory_size(512), "512 B");
  EXPECT_EQ(memory_size(1024), "1 KiB");
  EXPECT_EQ(memory_size(2 * 1024 * 1024), "2 MiB");  // PyTorch's small-segment granule
  EXPECT_EQ(memory_size(1.5 * 1024 * 1024 * 1024), "1.5 GiB");
  EXPECT_EQ(memory_size(20.0 * 1024 * 1024 + 512 * 1024), "20.5 MiB");
  EXPECT_EQ(memory_size(1000.0 * 1024 * 1024), "1000 MiB");  // four digits below 1024
  EXPECT_EQ(memory_size(1023.9 * 1024 * 1024), "1 GiB");     // rounding carries into GiB
  EXPECT_EQ(memory_size(80.0 * 1024 * 1024 * 1024), "80 GiB");
  EXPECT_EQ(memory_size(-3.0 * 1024 * 1024), "-3 MiB");
  EXPECT_EQ(memory_size(std::nan("")), "-");
}

TEST(Units, Rates) {
  EXPECT_EQ(byte_rate(2.98e12), "2.98 TB/s");
  EXPECT_EQ(byte_rate(3e12), "3 TB/s");
  EXPECT_EQ(byte_rate(2006e9), "2.01 TB/s");
  EXPECT_EQ(byte_rate(25e6), "25 MB/s");
  EXPECT_EQ(byte_rate(2.5e6), "2.5 MB/s");
  EXPECT_EQ(flop_rate(1e12), "1 TFLOP/s");
  EXPECT_EQ(flop_rate(6.7e13), "67 TFLOP/s");
  EXPECT_EQ(si(0.5e6, "FLOP/s"), "500 kFLOP/s");
}

TEST(Units, Percentages) {
  EXPECT_EQ(percent(0.5), "0.5 %");
  EXPECT_EQ(percent(5), "5.0 %");
  EXPECT_EQ(percent(9.94), "9.9 %");
  EXPECT_EQ(percent(9.95), "10 %");
  EXPECT_EQ(percent(25), "25 %");
  EXPECT_EQ(percent(99.4), "99 %");
  EXPECT_EQ(percent(100.6), "101 %");
  EXPECT_EQ(percent_of(0.153), "15 %");
  EXPECT_EQ(percent_of(0.005), "0.5 %");
  EXPECT_EQ(percent_of(1.0), "100 %");
}

TEST(Units, PlainNumbers) {
  EXPECT_EQ(real3(916.2), "916");
  EXPECT_EQ(real3(12.46), "12.5");
  EXPECT_EQ(real3(0.2357), "0.24");
  EXPECT_EQ(real3(5), "5.00");
  EXPECT_EQ(real3(8448), "8448");
  EXPECT_EQ(ns_count(4000), "4000 ns");
  EXPECT_EQ(ns_count(812.5), "812.5 ns");
  EXPECT_EQ(ns_count(812.25), "812.2 ns");  // one decimal, printf rounding of the binary value
}

TEST(Units, NegativeValuesKeepTheirSign) {
  EXPECT_EQ(duration(-1.5e-3), "-1.5 ms");
  EXPECT_EQ(duration_ns(-999), "-999 ns");
  EXPECT_EQ(byte_rate(-2.98e12), "-2.98 TB/s");
  EXPECT_EQ(percent(-50), "-50 %");  // the magnitude picks the decimals
  EXPECT_EQ(percent(-0.5), "-0.5 %");
  EXPECT_EQ(real3(-916.2), "-916");
  EXPECT_EQ(real3(-0.25), "-0.25");
}

TEST(Units, NotANumberIsADash) {
  EXPECT_EQ(si(kNaN, "s"), "-");
  EXPECT_EQ(duration(kNaN), "-");
  EXPECT_EQ(bytes(kNaN), "-");
  EXPECT_EQ(byte_rate(kNaN), "-");
  EXPECT_EQ(flop_rate(kNaN), "-");
  EXPECT_EQ(percent(kNaN), "-");
  EXPECT_EQ(percent_of(kNaN), "-");
  EXPECT_EQ(real3(kNaN), "-");
  EXPECT_EQ(ns_count(kNaN), "-");
}

TEST(Units, Infinities) {
  EXPECT_EQ(duration(kInf), "inf s");
  EXPECT_EQ(byte_rate(-kInf), "-inf B/s");
  EXPECT_EQ(si(kInf, ""), "inf");
  EXPECT_EQ(percent(kInf), "-");
  EXPECT_EQ(real3(-kInf), "-");
}

// --- Table columns (core/table_units.hpp) ---

TEST(TableUnits, FamiliesOfColumnUnits) {
  using units::UnitFamily;
  EXPECT_EQ(units::unit_family("ns"), UnitFamily::kTime);
  EXPECT_EQ(units::unit_family("us"), UnitFamily::kTime);
  EXPECT_EQ(units::unit_family("µs"), UnitFamily::kTime);
  EXPECT_EQ(units::unit_family("s"), UnitFamily::kTime);
  EXPECT_EQ(units::unit_family("bytes"), UnitFamily::kSize);
  EXPECT_EQ(units::unit_family("MB"), UnitFamily::kSize);
  EXPECT_EQ(units::unit_family("MiB"), UnitFamily::kNone);  // binary sizes keep their unit
  EXPECT_EQ(units::unit_family("GB/s"), UnitFamily::kNone);
  EXPECT_EQ(units::unit_family("%"), UnitFamily::kNone);
  EXPECT_EQ(units::unit_family(""), UnitFamily::kNone);
}

TEST(TableUnits, ColumnUnitFromTheLargestValue) {
  // op_sum's CPU Total of the cnn trace: 443,378,042 ns reads as 443.4 ms.
  auto s = units::column_scale("ns", 443378042);
  EXPECT_EQ(s.unit, "ms");
  EXPECT_DOUBLE_EQ(s.factor, 1e-6);
  s = units::column_scale("ns", 999);
  EXPECT_EQ(s.unit, "ns");
  EXPECT_DOUBLE_EQ(s.factor, 1.0);
  s = units::column_scale("ns", 1000);
  EXPECT_EQ(s.unit, "µs");
  s = units::column_scale("ms", 6824.6);  // a wall time given in ms
  EXPECT_EQ(s.unit, "s");
  EXPECT_DOUBLE_EQ(s.factor, 1e-3);
  s = units::column_scale("us", 0.25);  // below 1 µs: ns
  EXPECT_EQ(s.unit, "ns");
  EXPECT_DOUBLE_EQ(s.factor, 1e3);
  s = units::column_scale("s", 1e6);  // nothing above s
  EXPECT_EQ(s.unit, "s");
  // "Total (MB) 0.0000": 4 bytes in an MB column read as 4 B.
  s = units::column_scale("MB", 4e-6);
  EXPECT_EQ(s.unit, "B");
  EXPECT_DOUBLE_EQ(s.factor, 1e6);
  s = units::column_scale("bytes", 1.5e9);
  EXPECT_EQ(s.unit, "GB");
  EXPECT_DOUBLE_EQ(s.factor, 1e-9);
  s = units::column_scale("bytes", 0.5);  // below 1 B: B
  EXPECT_EQ(s.unit, "B");
}

TEST(TableUnits, EmptyZeroOrOtherColumnsKeepTheirUnit) {
  EXPECT_EQ(units::column_scale("ns", 0).unit, "ns");
  EXPECT_EQ(units::column_scale("us", 0).unit, "µs");
  EXPECT_EQ(units::column_scale("bytes", kNaN).unit, "B");
  const auto s = units::column_scale("GB/s", 12345);
  EXPECT_EQ(s.unit, "GB/s");
  EXPECT_DOUBLE_EQ(s.factor, 1.0);
}

TEST(TableUnits, SmallValuesKeepTwoSignificantDigits) {
  EXPECT_EQ(units::cell_decimals(0.0042, 1), 4);  // "0.0042", never "0.0"
  EXPECT_EQ(units::cell_decimals(0.042, 3), 3);   // already 2 digits at 3 decimals
  EXPECT_EQ(units::cell_decimals(12.5, 1), 1);
  EXPECT_EQ(units::cell_decimals(443.378, 1), 1);
  EXPECT_EQ(units::cell_decimals(0, 1), 1);
  EXPECT_EQ(units::cell_decimals(-0.0042, 1), 4);
  EXPECT_EQ(units::cell_decimals(1e-15, 1), 9);  // at most 9
  EXPECT_EQ(units::cell_decimals(kNaN, 2), 2);
}

TEST(TableUnits, NamesCutInTheMiddle) {
  EXPECT_EQ(units::cut_middle("abcdefghij", 10), "abcdefghij");  // fits
  EXPECT_EQ(units::cut_middle("abcdefghij", 0), "abcdefghij");   // full
  EXPECT_EQ(units::cut_middle("abcdefghij", 5), "ab…ij");
  EXPECT_EQ(units::cut_middle("abcdefghij", 6), "abc…ij");
  EXPECT_EQ(units::code_points(units::cut_middle(std::string(200, 'x'), 80)), 80u);
  // Code points, not bytes: "µ" is one.
  EXPECT_EQ(units::cut_middle("µµµµµµµµµµ", 5), "µµ…µµ");
  EXPECT_EQ(units::code_points("aµb"), 3u);
}

TEST(TableUnits, CutAroundShowsWhereNamesDiffer) {
  EXPECT_EQ(units::cut_around("abcdefghij", 5, 5), "…efg…");
  EXPECT_EQ(units::cut_around("abcdefghij", 5, 0), "abcd…");
  EXPECT_EQ(units::cut_around("abcdefghij", 5, 9), "…ghij");
  EXPECT_EQ(units::cut_around("abc", 5, 1), "abc");
}

}  // namespace
}  // namespace gpuscope::core::units
