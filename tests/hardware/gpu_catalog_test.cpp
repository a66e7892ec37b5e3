// The GPU catalog: required ids and aliases, peaks consistent with independent derivations, and malformed
// catalog files rejected with file and entry named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include "core/data_dir.hpp"
#include "core/error.hpp"
#include "hardware/gpu_catalog.hpp"

namespace trainsim {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kRequiredIds = {"V100-SXM", "A100-SXM-40GB", "A100-SXM-80GB", "H100-SXM", "H800-SXM",
                                               "H20",      "H200",          "B200",          "MI250X",   "MI300X",
                                               "GB200",    "GB300",         "B300",          "MI325X",   "MI355X"};

TEST(GpuCatalog, EveryRequiredIdIsPresent) {
  const GpuCatalog& cat = GpuCatalog::builtin();
  for (const auto& id : kRequiredIds) {
    const GpuSpec* g = cat.find(id);
    ASSERT_NE(g, nullptr) << id;
    EXPECT_EQ(g->name, id);
  }
  EXPECT_EQ(cat.names().size(), cat.gpus().size());
}

TEST(GpuCatalog, AliasesResolveToTheirEntry) {
  const GpuCatalog& cat = GpuCatalog::builtin();
  const std::vector<std::pair<std::string, std::string>> aliases = {{"V100", "V100-SXM"},
                                                                    {"V100-SXM2-32GB", "V100-SXM"},
                                                                    {"A100-SXM4-40GB", "A100-SXM-40GB"},
                                                                    {"A100-SXM4-80GB", "A100-SXM-80GB"},
                                                                    {"A100", "A100-SXM-80GB"},
                                                                    {"H100", "H100-SXM"},
                                                                    {"H100-SXM5-80GB", "H100-SXM"},
                                                                    {"H200-SXM", "H200"},
                                                                    {"h100-sxm", "H100-SXM"},
                                                                    {"GB200-NVL72", "GB200"},
                                                                    {"gb200", "GB200"},
                                                                    {"GB300-NVL72", "GB300"},
                                                                    {"B300-HGX", "B300"},
                                                                    {"MI325X-OAM", "MI325X"},
                                                                    {"MI355X-OAM", "MI355X"}};
  for (const auto& [alias, id] : aliases) {
    const GpuSpec* g = cat.find(alias);
    ASSERT_NE(g, nullptr) << alias;
    EXPECT_EQ(g->name, id) << alias;
  }
  EXPECT_EQ(cat.find("H100-PCIe"), nullptr);
  EXPECT_EQ(cat.find(""), nullptr);
}

TEST(GpuCatalog, FieldsAreSaneForEveryEntry) {
  for (const GpuSpec& g : GpuCatalog::builtin().gpus()) {
    SCOPED_TRACE(g.name);
    for (Precision p : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16, Precision::FP8}) {
      if (g.supports(p)) { EXPECT_GT(g.peak_tflops(p), 0); }
    }
    EXPECT_TRUE(g.supports(Precision::FP32));
    EXPECT_TRUE(g.supports(Precision::FP16));
    EXPECT_GT(g.hbm_GBps, 0);
    EXPECT_GT(g.memory_gib, 0);
    EXPECT_GT(g.scale_up_GBps, 0);
    EXPECT_GT(g.sm_count, 0);
    EXPECT_EQ(g.sm_version == 0, g.vendor == "AMD");
    // Tensor-core peaks are ordered fp32 < tf32 <= bf16 <= fp8 wherever present.
    if (g.supports(Precision::TF32)) { EXPECT_LT(g.peak_tflops(Precision::FP32), g.peak_tflops(Precision::TF32)); }
    if (g.supports(Precision::FP8)) {
      EXPECT_NEAR(g.peak_tflops(Precision::FP8), 2 * g.peak_tflops(Precision::FP16), 1.0);
    }
  }
}

// Dense tensor peaks from SM count x dense FLOP/clk/SM x tensor clock (AMD "Measuring Max-Achievable FLOPs" part 1
// table 2: V100 1024, A100 2048, H100 4096 FP16 FLOP/SM/clk; ROCm mi300.md: 2048 BF16 FLOP/clk/CU) — an independent
// check that the catalog's SM counts and peaks belong together.
TEST(GpuCatalog, PeaksAgreeWithSmCountTimesPerSmRate) {
  const GpuCatalog& cat = GpuCatalog::builtin();
  auto derived = [&](const std::string& id, double flop_per_sm_clk, double ghz) {
    return cat.find(id)->sm_count * flop_per_sm_clk * ghz / 1e3;
  };
  EXPECT_NEAR(cat.find("V100-SXM")->peak_tflops(Precision::FP16), derived("V100-SXM", 1024, 1.53), 1.0);
  EXPECT_NEAR(cat.find("A100-SXM-80GB")->peak_tflops(Precision::BF16), derived("A100-SXM-80GB", 2048, 1.41), 1.0);
  EXPECT_NEAR(cat.find("H100-SXM")->peak_tflops(Precision::BF16), derived("H100-SXM", 4096, 1.83), 1.0);
  EXPECT_NEAR(cat.find("MI300X")->peak_tflops(Precision::BF16), derived("MI300X", 2048, 2.1), 1.0);
  // MI250X is one GCD: half the 383 TFLOPS package.
  EXPECT_NEAR(cat.find("MI250X")->peak_tflops(Precision::BF16), 383.0 / 2, 0.5);
}

// Every entry carries both clocks and its rated power, with the sustained clock no higher than the peak basis
// (all parts derate under long dense load; the loader allows up to 1.1x, the data never needs it).
TEST(GpuCatalog, EveryEntryHasClocksAndPower) {
  for (const GpuSpec& g : GpuCatalog::builtin().gpus()) {
    SCOPED_TRACE(g.name);
    EXPECT_GT(g.peak_clock_mhz, 500);
    EXPECT_LT(g.peak_clock_mhz, 3000);
    EXPECT_GT(g.sustained_clock_mhz, 0.5 * g.peak_clock_mhz);
    EXPECT_LE(g.sustained_clock_mhz, g.peak_clock_mhz);
    EXPECT_GT(g.power_w, 100);
    EXPECT_LE(g.power_w, 1400);
    if (g.fp4_tflops) {
      EXPECT_GE(*g.fp4_tflops, 2 * g.peak_tflops(Precision::FP8) - 1.0);  // FP4 at least twice FP8 where present
    }
  }
}

// peak_clock_mhz is the clock the dense peak is specified at: SMs x dense BF16/FP16 FLOP/clk/SM x peak clock must give
// the catalog's peak (per-SM rates: AMD MAF blog part 1 for NVIDIA up to Hopper, 8192 for Blackwell; ROCm mi300.md
// 2048/CU for CDNA3, 1024 for CDNA2, 4096 for CDNA4). H20's rate is firmware-limited and has no such relation.
TEST(GpuCatalog, PeakClockReproducesTheDensePeak) {
  auto per_sm = [](const GpuSpec& g) -> double {
    if (g.architecture == "volta") return 1024;
    if (g.architecture == "ampere") return 2048;
    if (g.architecture == "hopper") return 4096;
    if (g.architecture == "blackwell") return 8192;
    if (g.architecture == "cdna2") return 1024;
    if (g.architecture == "cdna3") return 2048;
    if (g.architecture == "cdna4") return 4096;
    return 0;
  };
  for (const GpuSpec& g : GpuCatalog::builtin().gpus()) {
    if (g.name == "H20") continue;
    SCOPED_TRACE(g.name);
    const double peak = g.bf16_tflops ? *g.bf16_tflops : *g.fp16_tflops;
    const double derived = g.sm_count * per_sm(g) * g.peak_clock_mhz / 1e6;
    EXPECT_NEAR(derived / peak, 1.0, 0.005) << derived << " vs " << peak;
  }
}

// Values the brief's sources fix (docs/gpu-catalog.md): a few measured anchors must not drift.
TEST(GpuCatalog, MeasuredClockAnchors) {
  const GpuCatalog& cat = GpuCatalog::builtin();
  EXPECT_DOUBLE_EQ(cat.find("H100")->peak_clock_mhz, 1830);  // not the 1980 MHz maximum
  EXPECT_GE(cat.find("H100")->sustained_clock_mhz, 1440);    // [MEAS-H200] 1440-1530 MHz on the same die
  EXPECT_LE(cat.find("H100")->sustained_clock_mhz, 1780);
  EXPECT_DOUBLE_EQ(cat.find("H100")->boost_clock_mhz, 1980);
  EXPECT_DOUBLE_EQ(cat.find("H200")->sustained_clock_mhz, 1580);  // measured 2026-11-27, layer fwd + bwd
  EXPECT_DOUBLE_EQ(cat.find("H200")->boost_clock_mhz, 1980);
  EXPECT_DOUBLE_EQ(cat.find("A100")->boost_clock_mhz, 0);  // not logged for its short runs: long-run share
  EXPECT_DOUBLE_EQ(cat.find("H100")->power_w, 700);
  EXPECT_DOUBLE_EQ(cat.find("A100")->sustained_clock_mhz, 1200);
  EXPECT_DOUBLE_EQ(cat.find("A100")->peak_clock_mhz, 1410);
  EXPECT_DOUBLE_EQ(cat.find("MI300X")->sustained_clock_mhz, 1207);
  EXPECT_DOUBLE_EQ(cat.find("MI300X")->peak_clock_mhz, 2100);
  EXPECT_DOUBLE_EQ(cat.find("GB200")->power_w, 1200);
  EXPECT_DOUBLE_EQ(cat.find("GB300")->power_w, 1400);
}

TEST(GpuCatalog, BlackwellRackAndCdna4Entries) {
  const GpuCatalog& cat = GpuCatalog::builtin();
  const GpuSpec* gb200 = cat.find("GB200");
  ASSERT_NE(gb200, nullptr);
  EXPECT_EQ(gb200->architecture, "blackwell");
  EXPECT_EQ(gb200->sm_version, 100);
  EXPECT_DOUBLE_EQ(gb200->scale_up_GBps, 900);  // NVLink5, per direction
  EXPECT_EQ(gb200->scale_up_domain, 72);
  ASSERT_TRUE(gb200->fp4_tflops.has_value());
  EXPECT_DOUBLE_EQ(*gb200->fp4_tflops, 10000);
  EXPECT_GT(gb200->peak_tflops(Precision::BF16), cat.find("B200")->peak_tflops(Precision::BF16));
  EXPECT_EQ(cat.find("GB300")->scale_up_domain, 72);
  EXPECT_EQ(cat.find("H100")->scale_up_domain, 0);  // not stated
  EXPECT_FALSE(cat.find("H100")->fp4_tflops.has_value());
  const GpuSpec* mi355 = cat.find("MI355X");
  ASSERT_NE(mi355, nullptr);
  EXPECT_EQ(mi355->architecture, "cdna4");
  EXPECT_FALSE(mi355->supports(Precision::TF32));  // gfx950 has no TF32 matrix instructions
  EXPECT_TRUE(mi355->supports(Precision::FP8));
  EXPECT_EQ(cat.find("MI325X")->sm_count, cat.find("MI300X")->sm_count);  // same compute dies
  EXPECT_GT(cat.find("MI325X")->memory_gib, cat.find("MI300X")->memory_gib);
}

TEST(GpuCatalog, V100HasNoBf16) {
  const GpuSpec* v100 = GpuCatalog::builtin().find("V100");
  ASSERT_NE(v100, nullptr);
  EXPECT_FALSE(v100->supports(Precision::BF16));
  EXPECT_FALSE(v100->supports(Precision::FP8));
  EXPECT_DOUBLE_EQ(v100->peak_tflops(Precision::FP16), 125);
  try {
    (void)v100->peak_tflops(Precision::BF16);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("V100-SXM"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bf16"), std::string::npos) << msg;
  }
}

// memory_gib is the driver-reported capacity: at least the strict conversion of the vendor GB figure and at most
// the vendor figure read as GiB (HBM stacks come in powers of two; the driver reserves a little).
TEST(GpuCatalog, MemoryLiesBetweenStrictConversionAndVendorFigureAsGiB) {
  const YAML::Node root = YAML::LoadFile(data_dir() + "/gpus.yaml");
  for (const auto& e : root["gpus"]) {
    const std::string id = e["id"].as<std::string>();
    const double gb = e["memory_gb"].as<double>();
    const double gib = GpuCatalog::builtin().find(id)->memory_gib;
    EXPECT_GE(gib, gb * 1e9 / (1024.0 * 1024 * 1024)) << id;
    EXPECT_LE(gib, gb + 0.01) << id;
  }
}

class TempFile {
 public:
  explicit TempFile(const std::string& text)
      : path_(fs::temp_directory_path() / ("trainsim-gpus-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".yaml")) {
    std::ofstream(path_) << text;
  }
  ~TempFile() { fs::remove(path_); }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

const std::string kEntry = R"(
  - id: TOY
    aliases: [TOY-1]
    vendor: NVIDIA
    architecture: hopper
    sm_version: 90
    sm_count: 10
    peak_tflops: {fp32: 1, tf32: 2, bf16: 4, fp16: 4, fp8: null}
    hbm_GBps: 100
    memory_gib: 8
    scale_up_GBps: 50
)";

void expect_error(const std::string& text, const std::vector<std::string>& fragments) {
  TempFile f(text);
  try {
    GpuCatalog::load(f.str());
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(f.str()), std::string::npos) << msg;
    for (const auto& frag : fragments) EXPECT_NE(msg.find(frag), std::string::npos) << msg << " lacks " << frag;
  }
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(GpuCatalogLoad, WellFormedToyCatalog) {
  TempFile f("gpus:" + kEntry);
  const GpuCatalog cat = GpuCatalog::load(f.str());
  ASSERT_NE(cat.find("toy-1"), nullptr);
  EXPECT_FALSE(cat.find("TOY")->supports(Precision::FP8));
  EXPECT_DOUBLE_EQ(cat.find("TOY")->peak_tflops(Precision::BF16), 4);
}

TEST(GpuCatalogLoad, MissingPeakKeyNamesEntryAndKey) {
  expect_error("gpus:" + replaced(kEntry, ", fp8: null", ""), {"TOY", "peak_tflops.fp8", "missing"});
}

TEST(GpuCatalogLoad, UnknownKeySuggestsTheRightOne) {
  expect_error("gpus:" + replaced(kEntry, "hbm_GBps", "hbm_GBs"), {"TOY", "hbm_GBs", "did you mean hbm_GBps"});
}

TEST(GpuCatalogLoad, NonNumberAndNonPositiveValuesAreRejected) {
  expect_error("gpus:" + replaced(kEntry, "memory_gib: 8", "memory_gib: lots"), {"TOY", "memory_gib", "lots"});
  expect_error("gpus:" + replaced(kEntry, "bf16: 4", "bf16: 0"), {"TOY", "peak_tflops.bf16"});
}

TEST(GpuCatalogLoad, UnknownArchitectureIsRejected) {
  expect_error("gpus:" + replaced(kEntry, "architecture: hopper", "architecture: kepler"), {"TOY", "kepler"});
}

TEST(GpuCatalogLoad, DuplicateNamesAcrossEntriesAreRejected) {
  expect_error("gpus:" + kEntry + replaced(replaced(kEntry, "id: TOY", "id: TOY2"), "[TOY-1]", "[toy]"),
               {"TOY2", "used twice"});
}

TEST(GpuCatalogLoad, ClocksPowerFp4AndDomainAreRead) {
  const std::string extra =
      "    peak_clock_mhz: 1800\n    sustained_clock_mhz: 1600\n    power_w: 650\n"
      "    scale_up_domain: 72\n";
  TempFile f("gpus:" + replaced(kEntry, "fp8: null}", "fp8: 8, fp4: 16}") + extra);
  const GpuCatalog cat = GpuCatalog::load(f.str());
  const GpuSpec* g = cat.find("TOY");
  ASSERT_NE(g, nullptr);
  EXPECT_DOUBLE_EQ(g->peak_clock_mhz, 1800);
  EXPECT_DOUBLE_EQ(g->sustained_clock_mhz, 1600);
  EXPECT_DOUBLE_EQ(g->power_w, 650);
  EXPECT_EQ(g->scale_up_domain, 72);
  ASSERT_TRUE(g->fp4_tflops.has_value());
  EXPECT_DOUBLE_EQ(*g->fp4_tflops, 16);
}

TEST(GpuCatalogLoad, GemmPlateauIsReadAndOptional) {
  TempFile f("gpus:" + replaced(kEntry, "fp8: null}", "fp8: 8}") + "    gemm_plateau: {bf16: 0.7, fp8: 0.6}\n");
  const GpuCatalog cat = GpuCatalog::load(f.str());
  const GpuSpec* g = cat.find("TOY");
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->gemm_plateau_16 && g->gemm_plateau_fp8);
  EXPECT_DOUBLE_EQ(*g->gemm_plateau_16, 0.7);
  EXPECT_DOUBLE_EQ(*g->gemm_plateau_fp8, 0.6);
  TempFile plain("gpus:" + kEntry);
  const GpuCatalog without = GpuCatalog::load(plain.str());
  EXPECT_FALSE(without.find("TOY")->gemm_plateau_16.has_value());
  TempFile fp4("gpus:" + replaced(kEntry, "fp8: null}", "fp8: 8, fp4: 16}") + "    gemm_plateau: {fp4: 0.4}\n");
  const GpuCatalog with_fp4 = GpuCatalog::load(fp4.str());
  ASSERT_TRUE(with_fp4.find("TOY")->gemm_plateau_fp4.has_value());
  EXPECT_DOUBLE_EQ(*with_fp4.find("TOY")->gemm_plateau_fp4, 0.4);
  EXPECT_FALSE(with_fp4.find("TOY")->gemm_plateau_fp8.has_value());
}

TEST(GpuCatalogLoad, BadGemmPlateauNamesTheKey) {
  expect_error("gpus:" + kEntry + "    gemm_plateau: {bf16: 1.2}\n", {"TOY", "gemm_plateau.bf16", "(0, 1]"});
  expect_error("gpus:" + kEntry + "    gemm_plateau: {bf16: 0}\n", {"TOY", "gemm_plateau.bf16"});
  expect_error("gpus:" + kEntry + "    gemm_plateau: {fp8: 0.5}\n", {"TOY", "gemm_plateau.fp8", "no FP8"});
  expect_error("gpus:" + kEntry + "    gemm_plateau: {fp4: 0.5}\n", {"TOY", "gemm_plateau.fp4", "no FP4"});
  expect_error("gpus:" + kEntry + "    gemm_plateau: {bf61: 0.5}\n", {"TOY", "gemm_plateau.bf61", "did you mean"});
  expect_error("gpus:" + kEntry + "    gemm_plateau: 0.7\n", {"TOY", "gemm_plateau", "mapping"});
}

TEST(GpuCatalogLoad, HostCpuIsReadAndChecked) {
  TempFile f("gpus:" + kEntry + "    host_cpu: grace\n");
  const GpuCatalog cat = GpuCatalog::load(f.str());
  EXPECT_EQ(cat.find("TOY")->host_cpu, "grace");
  TempFile plain("gpus:" + kEntry);
  EXPECT_EQ(GpuCatalog::load(plain.str()).find("TOY")->host_cpu, "");
  expect_error("gpus:" + kEntry + "    host_cpu: power9\n", {"TOY", "host_cpu", "grace, intel, amd"});
}

TEST(GpuCatalogLoad, ClocksAndPowerAreOptional) {
  TempFile f("gpus:" + kEntry);
  const GpuCatalog catalog = GpuCatalog::load(f.str());  // g points into it: keep it alive
  const GpuSpec* g = catalog.find("TOY");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->peak_clock_mhz, 0);
  EXPECT_EQ(g->sustained_clock_mhz, 0);
  EXPECT_EQ(g->power_w, 0);
  EXPECT_EQ(g->scale_up_domain, 0);
  EXPECT_FALSE(g->fp4_tflops.has_value());
}

TEST(GpuCatalogLoad, OneClockWithoutTheOtherIsRejected) {
  expect_error("gpus:" + kEntry + "    peak_clock_mhz: 1800\n", {"TOY", "sustained_clock_mhz", "missing"});
  expect_error("gpus:" + kEntry + "    sustained_clock_mhz: 1600\n", {"TOY", "peak_clock_mhz", "missing"});
}

TEST(GpuCatalogLoad, BadClockPowerAndDomainValuesAreRejected) {
  const std::string both = "    peak_clock_mhz: 1800\n    sustained_clock_mhz: ";
  expect_error("gpus:" + kEntry + both + "2000\n", {"TOY", "sustained_clock_mhz", "exceeds"});  // > 1.1 x 1800
  expect_error("gpus:" + kEntry + both + "0\n", {"TOY", "sustained_clock_mhz", "> 0"});
  expect_error("gpus:" + kEntry + "    peak_clock_mhz: -5\n    sustained_clock_mhz: 1\n", {"TOY", "peak_clock_mhz"});
  expect_error("gpus:" + kEntry + both + "fast\n", {"TOY", "sustained_clock_mhz", "fast"});
  expect_error("gpus:" + kEntry + "    power_w: 0\n", {"TOY", "power_w", "> 0"});
  expect_error("gpus:" + kEntry + "    scale_up_domain: 0\n", {"TOY", "scale_up_domain", ">= 1"});
  expect_error("gpus:" + replaced(kEntry, "fp8: null}", "fp8: null, fp4: 0}"), {"TOY", "peak_tflops.fp4"});
  expect_error("gpus:" + replaced(kEntry, "fp8: null}", "fp8: null, fp6: 3}"), {"TOY", "fp6", "unknown key"});
  // 1.1 x peak is still accepted (1980 MHz boost over an 1830 MHz basis is about 1.08).
  TempFile ok("gpus:" + kEntry + both + "1980\n");
  EXPECT_DOUBLE_EQ(GpuCatalog::load(ok.str()).find("TOY")->sustained_clock_mhz, 1980);
}

TEST(GpuCatalogLoad, BoostClockNeedsBothClocksAndIsAtLeastTheSustainedOne) {
  expect_error("gpus:" + kEntry + "    boost_clock_mhz: 1980\n", {"TOY", "boost_clock_mhz", "needs peak_clock_mhz"});
  const std::string both = "    peak_clock_mhz: 1800\n    sustained_clock_mhz: 1600\n";
  expect_error("gpus:" + kEntry + both + "    boost_clock_mhz: 1500\n", {"TOY", "boost_clock_mhz", "below"});
  expect_error("gpus:" + kEntry + both + "    boost_clock_mhz: 0\n", {"TOY", "boost_clock_mhz", "> 0"});
  expect_error("gpus:" + kEntry + both + "    boost_clok_mhz: 1900\n", {"TOY", "boost_clok_mhz", "did you mean"});
  TempFile ok("gpus:" + kEntry + both + "    boost_clock_mhz: 1980\n");
  EXPECT_DOUBLE_EQ(GpuCatalog::load(ok.str()).find("TOY")->boost_clock_mhz, 1980);
}

TEST(GpuCatalogLoad, Cdna4IsAnArchitecture) {
  TempFile f("gpus:" + replaced(replaced(kEntry, "architecture: hopper", "architecture: cdna4"), "sm_version: 90",
                                "sm_version: 0"));
  EXPECT_EQ(GpuCatalog::load(f.str()).find("TOY")->architecture, "cdna4");
}

TEST(GpuCatalogLoad, BadYamlAndWrongShape) {
  expect_error("gpus: [unclosed", {"malformed YAML"});
  expect_error("gpu:" + kEntry, {"gpus"});
}

}  // namespace
}  // namespace trainsim
