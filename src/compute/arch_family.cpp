#include "compute/arch_family.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace trainsim {

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}
bool contains(const std::string& hay, const char* needle) { return hay.find(needle) != std::string::npos; }
}  // namespace

ArchFamily classify_arch(const GpuSpec& gpu) {
  const std::string arch = lower(gpu.architecture);
  // Catalog names first (data/gpus.yaml: volta | ampere | hopper | blackwell | cdna2 | cdna3).
  if (contains(arch, "blackwell")) return ArchFamily::Blackwell;
  if (contains(arch, "hopper")) return ArchFamily::Hopper;
  if (contains(arch, "ampere")) return ArchFamily::Ampere;
  if (contains(arch, "volta")) return ArchFamily::Volta;
  if (contains(arch, "cdna2") || contains(arch, "gfx90a")) return ArchFamily::Cdna2;
  if (contains(arch, "cdna3") || contains(arch, "gfx942")) return ArchFamily::Cdna3;
  // CDNA4 (MI355X, gfx950) uses CDNA3's efficiency curves for lack of CDNA4 kernel measurements.
  if (contains(arch, "cdna4") || contains(arch, "gfx950")) return ArchFamily::Cdna3;
  // Then the compute capability; Ada (sm_89) has Ampere-class tensor cores per SM.
  if (gpu.sm_version >= 100) return ArchFamily::Blackwell;
  if (gpu.sm_version >= 90) return ArchFamily::Hopper;
  if (gpu.sm_version >= 80) return ArchFamily::Ampere;
  if (gpu.sm_version >= 70) return ArchFamily::Volta;
  if (contains(lower(gpu.vendor), "amd")) return ArchFamily::Cdna3;
  return ArchFamily::Hopper;
}

const char* to_string(ArchFamily f) {
  switch (f) {
    case ArchFamily::Volta: return "volta";
    case ArchFamily::Ampere: return "ampere";
    case ArchFamily::Hopper: return "hopper";
    case ArchFamily::Blackwell: return "blackwell";
    case ArchFamily::Cdna2: return "cdna2";
    case ArchFamily::Cdna3: return "cdna3";
  }
  return "?";
}

}  // namespace trainsim
