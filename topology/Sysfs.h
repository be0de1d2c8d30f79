// NICs and PCIe link states from sysfs, without libibverbs or any build dependency. Every reader
// takes the sysfs root ("/sys" on a live machine) so tests run on small fake trees.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topology/Topology.h"

namespace cb {

// RDMA devices (<root>/class/infiniband/*: ports with state, rate, link layer; netdevs from
// device/net) then Ethernet interfaces backed by a device (<root>/class/net/*/device; loopback,
// bridges and other virtual interfaces have none) that no RDMA device claims.
std::vector<Nic> readSysfsNics(const std::string& sysRoot);

// <root>/bus/pci/devices/<busId>/{current,max}_link_{speed,width}; nullopt if absent.
std::optional<PcieLink> readSysfsPcieLink(const std::string& sysRoot, const std::string& busId);

// Parsers of sysfs values, public for tests.
int pcieGenOfSpeed(std::string_view speed);     // "8.0 GT/s PCIe" -> 3; 0 unknown
double parseIbRate(std::string_view rate);      // "100 Gb/sec (4X EDR)" -> 100; 0 unknown
std::string parseIbState(std::string_view st);  // "4: ACTIVE" -> "ACTIVE"
std::string ibPortStateName(int state);         // 4 -> "ACTIVE"
void sortNics(std::vector<Nic>& nics);          // RDMA first, then by name

// Completes a live topology: NIC ports and rates, and the PCIe generation and width of every
// GPU and NIC (current and maximum), from sysfs.
void addSysfsFacts(MachineTopology& t, const std::string& sysRoot);

}  // namespace cb
