#include "ui/panels/first_start_dialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace p64::ui {

FirstStartDialog::FirstStartDialog(const QString& model_path, QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Welcome to P64 Lab"));
  setObjectName("first_start_dialog");
  auto* text = new QLabel(
      tr("<p><b>The lab store has no measurements yet.</b></p>"
         "<p>P64 Lab can create a small synthetic model (the <i>tiny</i> preset: 64 wide, 2 layers, random "
         "weights, Q8_0) and measure it on the CPU backend: a decode-proxy, a timeline and a short A/B of "
         "one thread against two. Every panel then has something to show. It takes a few seconds and can "
         "be cancelled.</p>"
         "<p>The model is written to<br><tt>%1</tt><br>(and converted to .p64 beside it).</p>")
          .arg(model_path.toHtmlEscaped()),
      this);
  text->setWordWrap(true);
  text->setTextInteractionFlags(Qt::TextSelectableByMouse);
  never_again_ = new QCheckBox(tr("Don't offer this again"), this);
  auto* buttons = new QDialogButtonBox(this);
  accept_ = buttons->addButton(tr("Create and Measure"), QDialogButtonBox::AcceptRole);
  skip_ = buttons->addButton(tr("Skip"), QDialogButtonBox::RejectRole);
  accept_->setDefault(true);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(text);
  layout->addWidget(never_again_);
  layout->addWidget(buttons);
  setMinimumWidth(480);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

}  // namespace p64::ui
