#include "ui/models/p64_tables.h"

#include <iterator>

#include <QStringList>

#include "ui/models/passport_model.h"  // format_bytes

namespace p64::ui {

namespace {
QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }
QString hex32(uint32_t v) { return QString("%1").arg(v, 8, 16, QChar('0')); }
QString hex64(uint64_t v) { return QString("0x%1").arg(v, 0, 16); }

const char* token_type_name(int32_t t) {
  switch (static_cast<TokenType>(t)) {
    case TokenType::Normal: return "normal";
    case TokenType::Unknown: return "unknown";
    case TokenType::Control: return "control";
    case TokenType::UserDefined: return "user-defined";
    case TokenType::Unused: return "unused";
    case TokenType::Byte: return "byte";
    case TokenType::Undefined: break;
  }
  return "undefined";
}

QString special(const Vocabulary& v, int32_t id) {
  if (id < 0 || static_cast<size_t>(id) >= v.tokens.size()) return "—";
  return QString("%1 %2").arg(id).arg(qs(v.tokens[static_cast<size_t>(id)]));
}
}  // namespace

QString shape_text(const int64_t ne[4], uint32_t n_dims) {
  QStringList parts;
  for (uint32_t i = 0; i < std::max<uint32_t>(n_dims, 1) && i < 4; ++i) parts << QString::number(ne[i]);
  return parts.join(" × ");
}

QVector<KeyValueModel::Row> header_rows(const P64Contents& c) {
  QVector<KeyValueModel::Row> r;
  r << KeyValueModel::Row{"File", qs(c.path)}
    << KeyValueModel::Row{"Format version", QString::number(c.header.version)}
    << KeyValueModel::Row{"Flags", qs(p64_flags_text(c.header.flags))}
    << KeyValueModel::Row{"File size", format_bytes(double(c.header.file_size))}
    << KeyValueModel::Row{"Tensor data", QString("%1 at %2").arg(format_bytes(double(c.header.data_size)), hex64(c.header.data_offset))}
    << KeyValueModel::Row{"Data alignment", QString::number(c.header.data_alignment)}
    << KeyValueModel::Row{"Header CRC-32C", hex32(c.header.header_crc32c)};
  for (const P64SectionInfo& s : c.sections)
    r << KeyValueModel::Row{QString("Section: %1").arg(qs(p64_section_name(s.kind))),
                            QString("%1 entries, %2 at %3, CRC %4")
                                .arg(s.count)
                                .arg(format_bytes(double(s.size)), hex64(s.offset), hex32(s.crc32c))};
  return r;
}

QVector<KeyValueModel::Row> hparams_rows(const HParams& hp) {
  QVector<KeyValueModel::Row> r;
  auto add = [&r](const char* k, const QString& v) { r << KeyValueModel::Row{k, v}; };
  add("arch", qs(hp.arch));
  add("name", hp.name.empty() ? "—" : qs(hp.name));
  add("n_embd", QString::number(hp.n_embd));
  add("n_layer", QString::number(hp.n_layer));
  add("n_head", QString::number(hp.n_head));
  add("n_head_kv", QString::number(hp.n_head_kv));
  add("head_dim", QString::number(hp.head_dim));
  add("n_ff", QString::number(hp.n_ff));
  add("n_vocab", QString::number(hp.n_vocab));
  add("n_ctx_train", QString::number(hp.n_ctx_train));
  add("rope_dim", QString::number(hp.rope_dim));
  add("rope_base", QString::number(double(hp.rope_base), 'g', 8));
  add("rms_eps", QString::number(double(hp.rms_eps), 'g', 4));
  const char* scaling[] = {"none", "linear", "llama3", "longrope"};
  const auto st = static_cast<uint32_t>(hp.rope_scaling.type);
  add("rope_scaling", st < std::size(scaling) ? scaling[st] : "?");
  if (hp.rope_scaling.type != RopeScalingType::None)
    add("rope_scaling.factor", QString::number(double(hp.rope_scaling.factor)));
  add("rope_freq_factors", hp.rope_freq_factors.empty() ? "—" : QString("%1 values").arg(hp.rope_freq_factors.size()));
  add("rope_layout", hp.rope_layout == RopeLayout::Adjacent ? "adjacent pairs" : "halves");
  add("tied_output", hp.tied_output ? "yes" : "no");
  add("file_type", QString::number(hp.file_type));
  return r;
}

QVector<KeyValueModel::Row> tokenizer_rows(const Vocabulary& v) {
  QVector<KeyValueModel::Row> r;
  auto add = [&r](const char* k, const QString& val) { r << KeyValueModel::Row{k, val}; };
  add("kind", v.kind == TokenizerKind::SentencePiece ? "SentencePiece" : "byte-level BPE");
  add("pre-tokenizer", v.pre.empty() ? "—" : qs(v.pre));
  add("tokens", QString::number(v.tokens.size()));
  add("merges", QString::number(v.merges.size()));
  add("bos", special(v, v.bos_id));
  add("eos", special(v, v.eos_id));
  add("eot", special(v, v.eot_id));
  add("unk", special(v, v.unk_id));
  add("pad", special(v, v.pad_id));
  add("add_bos", v.add_bos ? "yes" : "no");
  add("add_space_prefix", v.add_space_prefix ? "yes" : "no");
  add("chat template", v.chat_template.empty() ? "(none)" : QString("%1 characters").arg(v.chat_template.size()));
  return r;
}

// --- tensors -----------------------------------------------------------------------------

void TensorTableModel::set_contents(ContentsPtr c) {
  beginResetModel();
  c_ = std::move(c);
  endResetModel();
}

uint64_t TensorTableModel::total_bytes() const {
  uint64_t n = 0;
  if (c_)
    for (const auto& t : c_->tensors) n += t.bytes;
  return n;
}

int TensorTableModel::rowCount(const QModelIndex& parent) const {
  return (parent.isValid() || !c_) ? 0 : static_cast<int>(c_->tensors.size());
}

QVariant TensorTableModel::data(const QModelIndex& index, int role) const {
  if (!c_ || !index.isValid()) return {};
  const P64TensorEntry& t = c_->tensors[static_cast<size_t>(index.row())];
  if (role == Qt::UserRole) {  // sort keys
    switch (index.column()) {
      case kLayer: return t.layer;
      case kBytes: return QVariant::fromValue<qulonglong>(t.bytes);
      case kOffset: return QVariant::fromValue<qulonglong>(t.offset);
      default: break;
    }
  }
  if (role == Qt::TextAlignmentRole && (index.column() == kBytes || index.column() == kLayer))
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole && role != Qt::UserRole) return {};
  switch (index.column()) {
    case kName: return qs(t.name);
    case kLayer: return t.layer < 0 ? QString("—") : QString::number(t.layer);
    case kType: return qs(dtype_name(t.dtype));
    case kShape: return shape_text(t.ne, t.n_dims);
    case kBytes: return format_bytes(double(t.bytes));
    case kOffset: return hex64(t.offset);
    case kCrc: return hex32(t.crc32c);
  }
  return {};
}

QVariant TensorTableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Tensor", "Layer", "Type", "Shape", "Bytes", "Offset", "CRC-32C"};
  return section < kColumns ? tr(names[section]) : QVariant();
}

// --- schedule ----------------------------------------------------------------------------

void ScheduleModel::set_contents(ContentsPtr c) {
  beginResetModel();
  c_ = std::move(c);
  endResetModel();
}

int ScheduleModel::rowCount(const QModelIndex& parent) const {
  return (parent.isValid() || !c_) ? 0 : static_cast<int>(c_->schedule.size());
}

QVariant ScheduleModel::data(const QModelIndex& index, int role) const {
  if (!c_ || !index.isValid() || role != Qt::DisplayRole) return {};
  const P64ScheduleRow& s = c_->schedule[static_cast<size_t>(index.row())];
  switch (index.column()) {
    case kGroup:
      return s.kind == P64GroupKind::Embedding ? QString("embedding")
             : s.kind == P64GroupKind::Head    ? QString("head")
                                               : QString("block %1").arg(s.layer);
    case kFirstTensor: return s.first_tensor;
    case kTensors: return s.n_tensors;
    case kOffset: return hex64(s.offset);
    case kBytes: return format_bytes(double(s.bytes));
  }
  return {};
}

QVariant ScheduleModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Group", "First tensor", "Tensors", "Offset", "Bytes"};
  return section < kColumns ? tr(names[section]) : QVariant();
}

// --- manifold ----------------------------------------------------------------------------

void ManifoldModel::set_contents(ContentsPtr c) {
  beginResetModel();
  c_ = std::move(c);
  endResetModel();
}

QString ManifoldModel::coordinate_name(int k) {
  return (k >= 0 && k < 10) ? QString::fromUtf8(kManifoldCoordinateNames[k]) : QString();
}

QVector<double> ManifoldModel::coordinate_across_layers(int k) const {
  QVector<double> v;
  if (!c_ || k < 0 || k >= 10) return v;
  for (const auto& row : c_->manifold)
    if ((row.flags & kManifoldGlobal) == 0) v << double(row.c[k]);
  return v;
}

int ManifoldModel::rowCount(const QModelIndex& parent) const {
  return (parent.isValid() || !c_) ? 0 : static_cast<int>(c_->manifold.size());
}

QVariant ManifoldModel::data(const QModelIndex& index, int role) const {
  if (!c_ || !index.isValid()) return {};
  const ManifoldCoordinate10D& row = c_->manifold[static_cast<size_t>(index.row())];
  if (role == Qt::UserRole && index.column() > 0) return double(row.c[index.column() - 1]);
  if (role != Qt::DisplayRole) return {};
  if (index.column() == 0) return (row.flags & kManifoldGlobal) ? QString("global") : QString::number(row.id);
  return QString::number(double(row.c[index.column() - 1]), 'g', 5);
}

QVariant ManifoldModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  return section == 0 ? tr("Layer") : coordinate_name(section - 1);
}

// --- vocabulary --------------------------------------------------------------------------

void VocabModel::set_contents(ContentsPtr c) {
  beginResetModel();
  c_ = std::move(c);
  endResetModel();
}

int VocabModel::rowCount(const QModelIndex& parent) const {
  return (parent.isValid() || !c_) ? 0 : static_cast<int>(c_->vocab.tokens.size());
}

QVariant VocabModel::data(const QModelIndex& index, int role) const {
  if (!c_ || !index.isValid() || role != Qt::DisplayRole) return {};
  const Vocabulary& v = c_->vocab;
  const auto i = static_cast<size_t>(index.row());
  switch (index.column()) {
    case kId: return index.row();
    case kPiece: return qs(v.tokens[i]);
    case kScore: return i < v.scores.size() ? QVariant(double(v.scores[i])) : QVariant("—");
    case kType: return token_type_name(v.types.empty() ? 1 : v.types[i]);
  }
  return {};
}

QVariant VocabModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Id", "Piece", "Score", "Type"};
  return section < kColumns ? tr(names[section]) : QVariant();
}

}  // namespace p64::ui
