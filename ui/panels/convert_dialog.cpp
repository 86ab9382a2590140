#include "ui/panels/convert_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include "ui/core/model_io.h"

namespace p64::ui {

ConvertDialog::ConvertDialog(const QString& source, QWidget* parent) : QDialog(parent), source_(source) {
  setWindowTitle(tr("Convert to P64"));
  output_ = new QLineEdit(default_p64_path(source), this);
  output_->setMinimumWidth(420);
  tokenizer_ = new QLineEdit(this);
  const bool llama2c = QFileInfo(source).suffix().compare("bin", Qt::CaseInsensitive) == 0;
  if (llama2c) tokenizer_->setText(llama2c_tokenizer_beside(source));
  tokenizer_->setEnabled(llama2c);
  tokenizer_->setPlaceholderText(llama2c ? tr("llama2.c tokenizer file (required)") : tr("not needed for this format"));
  using Layout = ConvertOptions::Layout;
  layout_ = new QComboBox(this);
  layout_->addItem(tr("Keep the input's layout"), static_cast<int>(Layout::Keep));
  layout_->addItem(tr("SoA: Q4_K / Q6_K / Q8_0 split by field (the GPU kernels' layout)"), static_cast<int>(Layout::Soa));
  layout_->addItem(tr("CPU rows: Q8_0 / Q5_0 / Q4_K / Q6_K rows interleaved by 16 (the CPU kernels' layout)"), static_cast<int>(Layout::CpuRows));
  layout_->addItem(tr("Plain: GGUF's blocks"), static_cast<int>(Layout::Plain));
  quant_ = new QComboBox(this);
  quant_->addItem(tr("Keep the file's types"), QString());
  for (const char* q : {"Q8_0", "Q4_K", "Q6_K", "F16"}) quant_->addItem(q, QString(q));

  auto* form = new QFormLayout;
  form->addRow(tr("Source:"), new QLabel(QFileInfo(source).fileName(), this));
  form->addRow(tr("Write to:"), output_);
  form->addRow(tr("Tokenizer:"), tokenizer_);
  form->addRow(tr("Quantize float matrices:"), quant_);
  form->addRow(tr("Matrix layout:"), layout_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("Convert"));
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

QString ConvertDialog::output_path() const { return output_->text(); }

ConvertOptions ConvertDialog::options() const {
  ConvertOptions o;
  o.tokenizer_path = tokenizer_->text().toStdString();
  o.layout = static_cast<ConvertOptions::Layout>(layout_->currentData().toInt());
  const QString q = quant_->currentData().toString();
  if (!q.isEmpty()) o.quant = dtype_from_name(q.toStdString());
  return o;
}

}  // namespace p64::ui
