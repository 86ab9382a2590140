#pragma once
// The few NVML entry points the lab reads, declared from NVIDIA's public NVML API reference so
// the engine needs no GPU SDK header: the library is opened at run time (gpu_monitor.cpp), and
// the tests' stand-in library (tests/fake_nvml) implements the same signatures.
#include <cstdint>

extern "C" {

typedef int nvmlReturn_t;                  // an enum in nvml.h; 0 is success
typedef struct nvmlDevice_st* nvmlDevice_t;  // opaque handle
typedef int nvmlClockType_t;

typedef nvmlReturn_t (*nvmlInit_v2_fn)(void);
typedef nvmlReturn_t (*nvmlShutdown_fn)(void);
typedef const char* (*nvmlErrorString_fn)(nvmlReturn_t result);
typedef nvmlReturn_t (*nvmlDeviceGetCount_v2_fn)(unsigned int* count);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2_fn)(unsigned int index, nvmlDevice_t* device);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByPciBusId_v2_fn)(const char* pci_bus_id, nvmlDevice_t* device);
typedef nvmlReturn_t (*nvmlDeviceGetClockInfo_fn)(nvmlDevice_t device, nvmlClockType_t type, unsigned int* mhz);
typedef nvmlReturn_t (*nvmlDeviceGetPowerUsage_fn)(nvmlDevice_t device, unsigned int* milliwatts);
typedef nvmlReturn_t (*nvmlDeviceGetTotalEnergyConsumption_fn)(nvmlDevice_t device, unsigned long long* millijoules);
typedef nvmlReturn_t (*nvmlDeviceGetName_fn)(nvmlDevice_t device, char* name, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetEnforcedPowerLimit_fn)(nvmlDevice_t device, unsigned int* milliwatts);
// nvmlDeviceGetCurrentClocksEventReasons (drivers from R535) and its older name
// nvmlDeviceGetCurrentClocksThrottleReasons share this signature and these bits.
typedef nvmlReturn_t (*nvmlDeviceGetCurrentClocksReasons_fn)(nvmlDevice_t device, unsigned long long* reasons);

}  // extern "C"

namespace p64::nvml {

constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kErrorNotSupported = 3;
constexpr nvmlReturn_t kErrorNotFound = 6;

constexpr nvmlClockType_t kClockSm = 1;
constexpr nvmlClockType_t kClockMem = 2;

constexpr unsigned int kDeviceNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE

// Clocks-event (formerly throttle) reason bits.
constexpr uint64_t kReasonGpuIdle = 0x1;                   // nothing running: not judged
constexpr uint64_t kReasonApplicationsClocksSetting = 0x2;  // a clock the user set: not judged
constexpr uint64_t kReasonSwPowerCap = 0x4;
constexpr uint64_t kReasonHwSlowdown = 0x8;
constexpr uint64_t kReasonSyncBoost = 0x10;                 // a sync-boost group: not judged
constexpr uint64_t kReasonSwThermalSlowdown = 0x20;
constexpr uint64_t kReasonHwThermalSlowdown = 0x40;
constexpr uint64_t kReasonHwPowerBrakeSlowdown = 0x80;

}  // namespace p64::nvml
