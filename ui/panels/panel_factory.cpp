#include "ui/panels/panel_factory.h"

#include "ui/panels/ab_panel.h"
#include "ui/panels/builds_panel.h"
#include "ui/panels/chat_panel.h"
#include "ui/panels/explore_panel.h"
#include "ui/panels/models_panel.h"
#include "ui/panels/optimisations_panel.h"
#include "ui/panels/passport_panel.h"
#include "ui/panels/roofline_panel.h"
#include "ui/panels/runs_panel.h"
#include "ui/panels/scoreboard_panel.h"
#include "ui/panels/timeline_panel.h"

namespace p64::ui {

QList<Panel*> create_panels(Workbench& wb) {
  QList<Panel*> p;
  p << new ModelsPanel(wb);
  p << new ChatPanel(wb);
  p << new RunsPanel(wb);
  p << new AbPanel(wb);
  p << new ExplorePanel(wb);
  p << new TimelinePanel(wb);
  p << new RooflinePanel(wb);
  p << new ScoreboardPanel(wb);
  p << new BuildsPanel(wb);
  p << new OptimisationsPanel(wb);
  p << new PassportPanel(wb);
  return p;
}

}  // namespace p64::ui
