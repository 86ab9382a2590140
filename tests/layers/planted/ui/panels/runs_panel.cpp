// Planted back edge: a panel reaches the window that holds it.
#include "ui/shell/main_window.h"
