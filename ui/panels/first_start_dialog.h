#pragma once
#include <QDialog>

class QCheckBox;
class QPushButton;

namespace p64::ui {

// The first-start offer: what would be created and measured, where, and roughly how long;
// "Create and Measure" accepts, "Skip" rejects, and "Don't offer again" is remembered.
class FirstStartDialog : public QDialog {
  Q_OBJECT
 public:
  FirstStartDialog(const QString& model_path, QWidget* parent = nullptr);
  QPushButton* accept_button() const { return accept_; }
  QPushButton* skip_button() const { return skip_; }
  QCheckBox* never_again_box() const { return never_again_; }

 private:
  QPushButton* accept_;
  QPushButton* skip_;
  QCheckBox* never_again_;
};

}  // namespace p64::ui
