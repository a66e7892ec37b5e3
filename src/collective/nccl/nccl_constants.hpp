#pragma once
// NCCL 2.30.7's tuning constants (NCCL's src/tuning/cost_model.cc `ncclTunerConstantsDefaults`;
// channel, thread and FIFO limits from src/include/device.h, comm.h, collectives.h). Indices follow NCCL's own
// order so that a table row can be checked against the source line by line:
//   algorithm: Tree 0, Ring 1, CollNetDirect 2, CollNetChain 3, NVLS 4, NVLSTree 5, PAT 6
//   protocol:  LL 0, LL128 1, Simple 2
//   hardware:  NVLINK 0, PCI 1, NET 2
//   compute capability index: Volta 0 (<80), Ampere 1 (80-89), Hopper 2 (90-99), Blackwell 3 (>=100)
//   scale index ("index2"): 1 node 0, 2 nodes 1, 4+ nodes 2
namespace trainsim::nccl {

inline constexpr int kNumAlgorithms = 7;
inline constexpr int kNumProtocols = 3;
inline constexpr int kAlgoTree = 0, kAlgoRing = 1, kAlgoCollNetDirect = 2, kAlgoCollNetChain = 3, kAlgoNvls = 4,
                     kAlgoNvlsTree = 5, kAlgoPat = 6;
inline constexpr int kProtoLL = 0, kProtoLL128 = 1, kProtoSimple = 2;
inline constexpr int kHwNvlink = 0, kHwPci = 1, kHwNet = 2;

// baseLat [algo][proto], µs.
inline constexpr double kBaseLat[kNumAlgorithms][kNumProtocols] = {
    {6.8, 14.0, 8.4},  // Tree
    {6.6, 14.0, 8.4},  // Ring
    {0, 0, 0},         // CollNetDirect
    {0, 0, 0},         // CollNetChain
    {0, 0, 0},         // NVLS
    {0, 0, 0},         // NVLSTree
    {8.0, 8.0, 8.0},   // PAT
};

// hwLat [hw][algo][proto], µs.
inline constexpr double kHwLat[3][kNumAlgorithms][kNumProtocols] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},  // NVLINK
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},     // PCI
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}},    // NET
};

// llMaxBws [index1][index2], GB/s. index1 = compute-capability index on one node; on several nodes
// 0 for Intel/other CPUs, 1 for AMD CPUs (ncclTopoTuneModel's index1).
inline constexpr double kLLMaxBw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};

// Per-channel caps [cc index][index2], GB/s.
inline constexpr double kPerChMaxRingLL128Bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
inline constexpr double kPerChMaxTreeLL128Bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
inline constexpr double kPerChMaxTreeBw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
inline constexpr double kPerChMaxNvlsTreeBw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};

// nvlsEfficiency [cc index].
inline constexpr double kNvlsEfficiency[4] = {0.0, 0.0, 0.85, 0.74};

// treeCorrectionFactor [proto][log2(nBytes/64)] (ncclTopoGetAlgoTime); index 0 = 64-127 B, 10 = 64 KiB, 20 = 64 MiB.
inline constexpr int kTreeCorrectionEntries = 24;
inline constexpr double kTreeCorrectionFactor[kNumProtocols][kTreeCorrectionEntries] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
};

// Refinement factors of ncclTopoTuneModel's bandwidth step.
inline constexpr double kRingLLFactor = 0.5;      // Ring/LL: half the bus bandwidth (LL is 50 % payload)
inline constexpr double kRingLL128Factor = 0.92;  // Ring/LL128
inline constexpr double kTreeFactor = 0.92;       // Tree AllReduce, any protocol
inline constexpr double kTreeLLDivisor = 3.8;     // Tree/LL
inline constexpr double kTreeLL128SingleNode = 7.0 / 9.0;
inline constexpr double kTreeLL128MultiNode = 120.0 / 128.0;
inline constexpr double kTreePatternTreeFactor = 0.85;  // maxTreePattern == TREE (all NIC traffic on one GPU)
inline constexpr double kPatFactor = 0.75;
// Ring plateau (ncclTopoGetAlgoTime): Ring/Simple AllReduce on several nodes once nBytes/(nChannels·nRanks) >= 64.
inline constexpr double kRingPlateauFactor = 1.4, kRingPlateauFactorPreAmpere = 1.9;
inline constexpr double kRingPlateauMinBytesPerChannelRank = 64;

// Per-step network overhead, µs: 1.0 on Intel/other x86, 2.0 on AMD x86, or NCCL_NET_OVERHEAD/1000.
inline constexpr double kNetOverheadIntel = 1.0;

// Threads and per-thread work thresholds (comm.h, topoGetAlgoInfo).
inline constexpr int kMaxThreadsSimple = 512, kMaxThreadsLL = 512, kMaxThreadsLL128 = 640, kMaxThreadsNvls = 640;
inline constexpr int kSimplePcieThreads = 256;  // Ring/Simple on PCIe-only systems (ring bw·nCh <= PCI_BW)
inline constexpr double kPciBw = 12.0;          // PCI_BW, GB/s (topo.h)
inline constexpr double kThresholdLL = 8, kThresholdLL128 = 8, kThresholdSimple = 64;
inline constexpr double kThresholdCollNetSimple = 512;  // threadThresholds[CollNet*][Simple]
inline constexpr int kMaxThreadsCollNet = 640;          // CollNet CTAs use NCCL_MAX_NTHREADS

// CollNet (ncclTopoTuneModel, topoGetAlgoInfo): ≤ NCCL_MAX_DIRECT_ARITY + 1 local ranks; CollNetDirect Simple
// ×0.85 on SM90+.
inline constexpr int kMaxCollNetLocalRanks = 8;
inline constexpr double kCollNetDirectSm90Factor = 0.85;
inline constexpr double kCollNetDirectPerPeerLatUs = 0.4;  // per extra local rank

inline constexpr int kMaxChannels = 64;   // MAXCHANNELS
inline constexpr double kLocBw = 5000.0;  // LOC_BW (topo.h): a path inside one device or CPU, GB/s
// NCCL_MAX_DEV_WORK_BATCH_COLLS = 1024 / sizeof(ncclDevWorkColl): aggregated non-ring ops per latency
// (ncclTopoGetAlgoTime).
inline constexpr int kMaxDevWorkBatchColls = 8;
inline constexpr int kMaxNvlsArity = 32;  // NCCL_MAX_NVLS_ARITY: NVLS heads per node

// p2p (NCCL_P2P_LL_THRESHOLD, NCCL_P2P_PER_CHANNEL_NET_BW): LL below 16 KiB per channel, 14 GB/s of NIC
// bandwidth per p2p channel.
inline constexpr double kP2pLLThresholdBytes = 16384;
inline constexpr double kP2pPerChannelNetBw = 14.0;

}  // namespace trainsim::nccl
