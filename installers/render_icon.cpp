// p64-render-icon: renders the scalable app icon into the hicolor PNG sizes at build time, so
// the SVG stays the only source and desktops that do not read SVG icons still get a sharp one.
// Usage: p64-render-icon <icon.svg> <hicolor dir> <name> <size>...
#include <QDir>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s <icon.svg> <hicolor dir> <name> <size>...\n", argv[0]);
    return 2;
  }
  // The build machine may have no display; the icon's "p64" text still needs fonts, hence an app.
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);

  const QString svg = QString::fromLocal8Bit(argv[1]);
  QSvgRenderer renderer(svg);
  if (!renderer.isValid()) {
    std::fprintf(stderr, "p64-render-icon: %s: not a valid SVG\n", argv[1]);
    return 1;
  }
  const QString root = QString::fromLocal8Bit(argv[2]);
  const QString name = QString::fromLocal8Bit(argv[3]);
  for (int i = 4; i < argc; ++i) {
    const int size = std::atoi(argv[i]);
    if (size <= 0 || size > 1024) {
      std::fprintf(stderr, "p64-render-icon: bad size '%s'\n", argv[i]);
      return 2;
    }
    QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    renderer.render(&painter);
    painter.end();
    const QString dir = QString("%1/%2x%2/apps").arg(root).arg(size);
    const QString out = dir + "/" + name + ".png";
    if (!QDir().mkpath(dir) || !image.save(out, "PNG")) {
      std::fprintf(stderr, "p64-render-icon: cannot write %s\n", qPrintable(out));
      return 1;
    }
  }
  return 0;
}
