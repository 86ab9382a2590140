#pragma once
class QWidget;

namespace p64::ui {
class Job;

// Shows a window-modal progress dialog for `job` (title, fraction, what it is doing) whose
// Cancel button cancels the job; the dialog closes itself when the job ends. Never blocks.
void show_progress_dialog(QWidget* parent, Job* job);
}  // namespace p64::ui
