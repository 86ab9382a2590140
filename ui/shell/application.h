#pragma once
#include <QStringList>

namespace p64::ui {

// Everything main() does before the event loop, shared with the screenshot tool and tests:
// organisation/application names for QSettings, the theme from settings.
void init_application_metadata();
void init_resources();  // the icons in resources/p64lab.qrc (idempotent)
void init_theme_from_settings();

}  // namespace p64::ui
