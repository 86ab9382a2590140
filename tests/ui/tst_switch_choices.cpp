// switch_choices and Workbench::registered_backends headless: what the A/B page's switch picker
// and the Passport page's backend list offer, read from the registry the option reader checks.
#include <QtTest>

#include <algorithm>

#include "engine/common/error.h"
#include "ui/core/workbench.h"
#include "ui/models/switch_choices.h"
#include "ui/ui_test_support.h"

using p64::ui::SwitchChoice;

class TestSwitchChoices : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // (It also links the test support, whose start-up function registers the backends.)
  void initTestCase() { p64::ui::test::isolate_settings(settings_); }

  void the_cpu_backends_enum_and_bool_switches_offer_every_value_once_default_marked() {
    const std::vector<SwitchChoice> choices = p64::ui::switch_choices("cpu");
    auto values_of = [&](const QString& name) {
      QStringList v;
      for (const SwitchChoice& c : choices)
        if (c.name == name) v << c.value + (c.is_default ? "*" : "");
      return v;
    };
    QCOMPARE(values_of("isa"), (QStringList{"auto*", "avx512", "avx2", "scalar"}));
    QCOMPARE(values_of("kv_f16"), (QStringList{"0*", "1"}));
    for (const SwitchChoice& c : choices) {
      QVERIFY2(!c.description.isEmpty(), qPrintable(c.name));
      QVERIFY2(!c.status.isEmpty(), qPrintable(c.name));
    }
  }

  void an_unknown_backend_is_an_error_naming_it() {
    try {
      p64::ui::switch_choices("no-such-backend");
      QFAIL("an unknown backend gave switch choices");
    } catch (const p64::Error& e) {
      QVERIFY2(QString(e.what()).contains("no-such-backend"), e.what());
    }
  }

  void registered_backends_list_the_cpu_as_runnable_and_give_every_other_a_reason_or_none() {
    p64::ui::Workbench wb;
    const auto all = wb.registered_backends();
    const auto cpu = std::find_if(all.begin(), all.end(), [](const auto& b) { return b.name == "cpu"; });
    QVERIFY(cpu != all.end());
    QVERIFY2(cpu->why_not.isEmpty(), qPrintable(cpu->why_not));
    QStringList reasons;
    const QStringList runnable = wb.available_backends(&reasons);
    QCOMPARE(runnable.size() + reasons.size(), all.size());
    for (const auto& b : all) QCOMPARE(runnable.contains(b.name), b.why_not.isEmpty());
  }

 private:
  QTemporaryDir settings_;
};

QTEST_MAIN(TestSwitchChoices)
#include "tst_switch_choices.moc"
