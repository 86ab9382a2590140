#include "ui/panels/synth_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>

#include "ui/core/model_io.h"

namespace p64::ui {

QString SynthDialog::default_output_path(const QString& preset, const QString& quant) {
  const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/models";
  return QString("%1/%2-%3.gguf").arg(dir, preset, quant);
}

SynthDialog::SynthDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("New synthetic model"));
  preset_ = new QComboBox(this);
  preset_->addItems(synth_presets());
  quant_ = new QComboBox(this);
  quant_->addItems(synth_quants());
  seed_ = new QSpinBox(this);
  seed_->setRange(1, 1 << 30);
  seed_->setValue(1);
  output_ = new QLineEdit(this);
  output_->setMinimumWidth(380);
  auto* browse = new QPushButton(tr("Browse…"), this);
  auto* out_row = new QHBoxLayout;
  out_row->addWidget(output_, 1);
  out_row->addWidget(browse);

  auto* form = new QFormLayout;
  form->addRow(tr("Preset (real shapes, random weights):"), preset_);
  form->addRow(tr("Quant mix:"), quant_);
  form->addRow(tr("Seed:"), seed_);
  form->addRow(tr("Write GGUF to:"), out_row);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("Create and open"));
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(buttons);

  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(preset_, &QComboBox::currentTextChanged, this, &SynthDialog::update_default_path);
  connect(quant_, &QComboBox::currentTextChanged, this, &SynthDialog::update_default_path);
  connect(output_, &QLineEdit::textEdited, this, [this] { path_edited_ = true; });
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString p = QFileDialog::getSaveFileName(this, tr("Synthetic model"), output_->text(), "GGUF (*.gguf)");
    if (!p.isEmpty()) set_output_path(p);
  });
  set_preset("tiny");
  update_default_path();
}

QString SynthDialog::preset() const { return preset_->currentText(); }
QString SynthDialog::quant() const { return quant_->currentText(); }
quint64 SynthDialog::seed() const { return static_cast<quint64>(seed_->value()); }
QString SynthDialog::output_path() const { return output_->text(); }

void SynthDialog::set_preset(const QString& name) {
  const int i = preset_->findText(name);
  if (i >= 0) preset_->setCurrentIndex(i);
}

void SynthDialog::set_output_path(const QString& path) {
  path_edited_ = true;
  output_->setText(path);
}

void SynthDialog::update_default_path() {
  if (!path_edited_) output_->setText(default_output_path(preset(), quant()));
}

}  // namespace p64::ui
