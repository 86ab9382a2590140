#pragma once
#include <QDialog>

class QCheckBox;
class QComboBox;
class QLineEdit;
class QSpinBox;

namespace p64::ui {

// "New synthetic model…": a preset of real shapes (engine/format/synth.h), a quant mix, a
// seed and where to write it.
class SynthDialog : public QDialog {
  Q_OBJECT
 public:
  explicit SynthDialog(QWidget* parent = nullptr);
  QString preset() const;
  QString quant() const;
  quint64 seed() const;
  QString output_path() const;  // the .gguf synth writes; the .p64 sits beside it

  void set_preset(const QString& name);
  void set_output_path(const QString& path);
  static QString default_output_path(const QString& preset, const QString& quant);

 private:
  void update_default_path();
  QComboBox* preset_;
  QComboBox* quant_;
  QSpinBox* seed_;
  QLineEdit* output_;
  bool path_edited_ = false;
};

}  // namespace p64::ui
