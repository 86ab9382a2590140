// PassportModel headless: rows per section, dashes for facts a device does not give.
#include <QtTest>

#include "ui/models/passport_model.h"

using p64::ui::PassportModel;

class TestPassportModel : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void host_only_has_no_device_rows() {
    PassportModel m;
    p64::Passport p;
    p.host = p64::collect_host_facts();
    p.build = p64::collect_build_facts();
    m.set_passport(p);
    QVERIFY(!m.has_device());
    QVERIFY(m.rowCount() >= 8);
    QCOMPARE(m.value_of("Device", "Name"), QString());
    QCOMPARE(m.value_of("Host", "Logical cores"), QString::number(p.host.logical_cores));
    QCOMPARE(m.columnCount(), 3);
  }

  void device_and_measured_rows() {
    PassportModel m;
    p64::Passport p;
    p.device.backend = "cpu";
    p.device.name = "Test CPU";
    p.device.memory_bytes = 3ull << 30;
    p.measured.read_gbs = 12.34;
    m.set_passport(p);
    QVERIFY(m.has_device());
    QCOMPARE(m.value_of("Device", "Name"), QString("Test CPU"));
    QCOMPARE(m.value_of("Device", "Memory"), QString("3.0 GiB"));
    QCOMPARE(m.value_of("Measured", "Read bandwidth"), QString("12.3 GB/s"));
    QCOMPARE(m.value_of("Measured", "Copy bandwidth"), QString("—"));  // not measured: shown, not hidden
    // The section label is printed once per group.
    int device_labels = 0;
    for (int r = 0; r < m.rowCount(); ++r)
      if (m.index(r, PassportModel::kSection).data().toString() == "Device") ++device_labels;
    QCOMPARE(device_labels, 1);
  }

  // The ceiling the roofline draws is the one the passport shows, measured on a CPU.
  void cpu_caches_and_measured_compute_rows() {
    PassportModel m;
    p64::Passport p;
    p.host.caches = {48 << 10, 1 << 20, 32 << 20, "sysfs", ""};
    p.device.backend = "cpu";
    p.device.api_version = "avx512";
    p.compute = {1.2e11, 3.4e11, "avx512", 2, 5};
    m.set_passport(p);
    QCOMPARE(m.value_of("Host", "Caches"), QString("L1d 48 KiB, L2 1 MiB, L3 32 MiB (sysfs)"));
    QCOMPARE(m.value_of("Measured", "fp32 FMA"), QString("120.0 GFLOP/s"));
    QCOMPARE(m.value_of("Measured", "int8 dot products"), QString("340.0 Gop/s"));
    QCOMPARE(m.value_of("Device", "Compute ceiling"), QString("340 GFLOP/s (measured)"));
  }
};

QTEST_GUILESS_MAIN(TestPassportModel)
#include "tst_passport_model.moc"
