#pragma once
#include <QDialog>

#include "ui/core/model_io.h"

class QComboBox;
class QLineEdit;

namespace p64::ui {

// Convert a GGUF, llama2.c checkpoint (+ tokenizer) or HF folder to .p64: output path, matrix
// layout (keep, plain, SoA, CPU rows), optional quantization of float matrices (engine/format/convert.h options).
class ConvertDialog : public QDialog {
  Q_OBJECT
 public:
  ConvertDialog(const QString& source, QWidget* parent = nullptr);
  QString source() const { return source_; }
  QString output_path() const;
  ConvertOptions options() const;

 private:
  QString source_;
  QLineEdit* output_;
  QLineEdit* tokenizer_;
  QComboBox* layout_;
  QComboBox* quant_;
};

}  // namespace p64::ui
