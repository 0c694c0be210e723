// catalog/ddl.cc: the OceanBase DDL subset of OBKV-HBase (see ddl.h): a recursive-descent
// parser of catalog/ddl_lexer.cc's tokens that checks each CREATE TABLE against the OBKV-HBase table
// model (kv_attributes is read by catalog/kv_attributes.cc; statements are applied to a store
// in store/ddl_apply.cc).
#include "catalog/ddl.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <utility>

#include "ascii.h"
#include "catalog/ddl_lexer.h"
#include "catalog/kv_attributes.h"

namespace cellar {
namespace {

using ddl_detail::token;
using ddl_detail::upper;
using ddl_detail::where;

// ---------------------------------------------------------------------------------------
// Parser

struct generated_expr {
  enum class type : std::uint8_t { substring, abs, other };
  type t = type::other;
  std::string column;       // the argument column, upper case
  std::uint64_t start = 0;  // substring
  std::uint64_t length = 0;
  std::string text;  // as written, for messages
};

struct column_def {
  token name;        // as written (position for messages)
  std::string key;   // upper-case name
  std::string type;  // lower-case type name
  std::optional<std::uint64_t> length;
  bool not_null = false;
  std::optional<generated_expr> generated;
};

struct partition_clause {
  enum class type : std::uint8_t { none, key, range };
  type t = type::none;
  token at;
  std::string column;  // upper case
  token column_tok;
  std::uint64_t partitions = 1;
  struct range_part {
    token name;
    std::optional<std::string> bound;  // nullopt: MAXVALUE
  };
  std::vector<range_part> parts;
};

class parser {
 public:
  explicit parser(std::vector<token> tokens) : tk_(std::move(tokens)) {}

  result<std::vector<ddl_statement>> statements() {
    std::vector<ddl_statement> out;
    for (;;) {
      while (accept(";")) {}
      if (peek().t == token::type::end) return out;
      if (auto s = statement(out); !s) return s;
      if (!accept(";") && peek().t != token::type::end)
        return invalid(peek(), "';' expected after the statement, found " + show(peek()));
    }
  }

 private:
  // Token helpers.
  const token& peek(std::size_t ahead = 0) const { return tk_[std::min(pos_ + ahead, tk_.size() - 1)]; }
  const token& next() {
    const token& t = tk_[pos_];
    if (pos_ + 1 < tk_.size()) ++pos_;
    return t;
  }
  bool is_word(const token& t, std::string_view w) const {
    return t.t == token::type::ident && ascii_iequal(t.text, w);
  }
  bool at_word(std::string_view w, std::size_t ahead = 0) const { return is_word(peek(ahead), w); }
  bool accept_word(std::string_view w) {
    if (!at_word(w)) return false;
    next();
    return true;
  }
  bool accept(std::string_view punct) {
    if (peek().t != token::type::punct || peek().text != punct) return false;
    next();
    return true;
  }
  static std::string show(const token& t) {
    switch (t.t) {
      case token::type::end: return "the end of the input";
      case token::type::string: return "a string";
      case token::type::quoted_ident: return "`" + t.text + "`";
      default: return "'" + t.text + "'";
    }
  }
  static status invalid(const token& t, const std::string& msg) {
    return {code::invalid_argument, where(t.line, t.col) + msg};
  }
  static status unsupported(const token& t, const std::string& msg) {
    return {code::unsupported, where(t.line, t.col) + msg};
  }
  status expect_word(std::string_view w) {
    if (accept_word(w)) return status::ok();
    return invalid(peek(), upper(w) + " expected, found " + show(peek()));
  }
  status expect(std::string_view punct) {
    if (accept(punct)) return status::ok();
    return invalid(peek(), "'" + std::string(punct) + "' expected, found " + show(peek()));
  }
  result<token> name(std::string_view what) {
    const token& t = peek();
    if (t.t != token::type::ident && t.t != token::type::quoted_ident)
      return invalid(t, std::string(what) + " expected, found " + show(t));
    next();
    return t;
  }
  result<std::uint64_t> number(std::string_view what) {
    const token& t = peek();
    if (t.t != token::type::number) return invalid(t, std::string(what) + " expected, found " + show(t));
    next();
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc()) return invalid(t, std::string(what) + " " + t.text + " is too large");
    return v;
  }
  bool at_statement_end() const {
    return peek().t == token::type::end || (peek().t == token::type::punct && peek().text == ";");
  }

  // A table name `group$family` or `db.group$family` (group db:group).
  status table_name(const token& first, std::string& group, std::string& family) {
    std::string db;
    token t = first;
    if (peek().t == token::type::punct && peek().text == ".") {
      next();
      auto n = name("a table name after '" + first.text + ".'");
      if (!n) return n.error();
      db = first.text;
      t = *n;
    }
    auto dollar = t.text.find('$');
    if (dollar == std::string::npos || dollar == 0 || dollar + 1 == t.text.size() ||
        t.text.find('$', dollar + 1) != std::string::npos)
      return invalid(t, "table '" + t.text +
                            "' is not an OBKV-HBase table: name it TableGroupName$FamilyName, e.g. htable1$family1");
    group = (db.empty() ? "" : db + ":") + t.text.substr(0, dollar);
    family = t.text.substr(dollar + 1);
    return status::ok();
  }

  status if_not_exists(ddl_statement& st) {
    if (!at_word("IF")) return status::ok();
    next();
    if (auto s = expect_word("NOT"); !s) return s;
    if (auto s = expect_word("EXISTS"); !s) return s;
    st.if_not_exists = true;
    return status::ok();
  }
  status if_exists(ddl_statement& st) {
    if (!at_word("IF")) return status::ok();
    next();
    if (auto s = expect_word("EXISTS"); !s) return s;
    st.if_exists = true;
    return status::ok();
  }

  // The statement's own name for a refusal: "CREATE INDEX", "SHOW DATABASES", "SELECT".
  std::string statement_name(const std::string& verb) const {
    if (peek().t == token::type::ident) return verb + " " + upper(peek().text);
    return verb;
  }
  static status unsupported_statement(const std::string& name) {
    return {code::unsupported, name +
                                   " is not supported; cellar runs CREATE/DROP TABLEGROUP, CREATE/DROP TABLE, "
                                   "ALTER TABLE ... kv_attributes, TRUNCATE TABLE, SHOW TABLEGROUPS, SHOW TABLES, "
                                   "DESC, CREATE/DROP DATABASE, USE and SHOW DATABASES"};
  }

  status statement(std::vector<ddl_statement>& out) {
    const token first = peek();
    if (accept_word("CREATE")) {
      if (accept_word("DATABASE") || accept_word("SCHEMA")) return database(out, ddl_statement::kind::create_database);
      if (accept_word("TABLEGROUP")) return create_table_group(out);
      if (accept_word("TABLE")) return create_table(out, first);
      return unsupported_statement(statement_name("CREATE"));
    }
    if (accept_word("DROP")) {
      if (accept_word("DATABASE") || accept_word("SCHEMA")) return database(out, ddl_statement::kind::drop_database);
      if (accept_word("TABLEGROUP")) return drop_table_group(out);
      if (accept_word("TABLE")) return drop_table(out);
      return unsupported_statement(statement_name("DROP"));
    }
    if (accept_word("ALTER")) {
      if (accept_word("TABLE")) return alter_table(out);
      if (accept_word("SYSTEM")) return alter_system(out);
      return unsupported_statement(statement_name("ALTER"));
    }
    if (accept_word("TRUNCATE")) {
      accept_word("TABLE");
      return one_table(out, ddl_statement::kind::truncate_table);
    }
    if (accept_word("DESC") || accept_word("DESCRIBE")) return one_table(out, ddl_statement::kind::describe_table);
    if (accept_word("SHOW")) {
      if (accept_word("TABLEGROUPS")) return show(out, ddl_statement::kind::show_table_groups);
      if (accept_word("TABLES")) return show(out, ddl_statement::kind::show_tables);
      if (accept_word("DATABASES") || accept_word("SCHEMAS")) return show(out, ddl_statement::kind::show_databases);
      return unsupported_statement(statement_name("SHOW"));
    }
    if (accept_word("USE")) return database(out, ddl_statement::kind::use_database);
    for (std::string_view verb : {"SELECT", "INSERT",  "UPDATE",  "DELETE",   "REPLACE", "RENAME",   "SET",  "GRANT",
                                  "REVOKE", "EXPLAIN", "BEGIN",   "START",    "COMMIT",  "ROLLBACK", "LOCK", "UNLOCK",
                                  "CALL",   "LOAD",    "ANALYZE", "OPTIMIZE", "PURGE",   "FLUSH",    "KILL", "WITH"})
      if (is_word(first, verb)) return unsupported_statement(upper(verb));
    return invalid(first, "a DDL statement expected, found " + show(first));
  }

  // CREATE DATABASE [IF NOT EXISTS] db, DROP DATABASE [IF EXISTS] db, USE db.
  status database(std::vector<ddl_statement>& out, ddl_statement::kind k) {
    ddl_statement st;
    st.what = k;
    if (k == ddl_statement::kind::create_database)
      if (auto s = if_not_exists(st); !s) return s;
    if (k == ddl_statement::kind::drop_database)
      if (auto s = if_exists(st); !s) return s;
    auto n = name("a database name");
    if (!n) return n.error();
    st.group = n->text;
    // MySQL's database options (DEFAULT CHARSET ...) do not change cellar's model.
    if (k == ddl_statement::kind::create_database)
      while (!at_statement_end()) next();
    out.push_back(std::move(st));
    return status::ok();
  }

  // A table group name `g` or `db.g` (read as the HBase table name db:g).
  result<std::string> group_name(const token& t) {
    if (!(peek().t == token::type::punct && peek().text == ".")) return t.text;
    next();
    auto g = name("a table group name after '" + t.text + ".'");
    if (!g) return g.error();
    return t.text + ":" + g->text;
  }

  // TRUNCATE [TABLE] g$f, DESC g$f.
  status one_table(std::vector<ddl_statement>& out, ddl_statement::kind k) {
    ddl_statement st;
    st.what = k;
    auto n = name("a table name");
    if (!n) return n.error();
    if (auto s = table_name(*n, st.group, st.family); !s) return s;
    out.push_back(std::move(st));
    return status::ok();
  }

  // ALTER SYSTEM MOVE PARTITION 'g/i' [FROM 'node'] TO 'node' | ALTER SYSTEM BALANCE |
  // ALTER SYSTEM TRANSFER LEADER PARTITION 'g/i' TO 'node'.
  status alter_system(std::vector<ddl_statement>& out) {
    ddl_statement st;
    if (accept_word("BALANCE")) {
      st.what = ddl_statement::kind::balance;
      out.push_back(std::move(st));
      return status::ok();
    }
    if (accept_word("TRANSFER")) {
      if (auto s = expect_word("LEADER"); !s) return s;
      st.what = ddl_statement::kind::transfer_leader;
    } else if (accept_word("MOVE")) {
      st.what = ddl_statement::kind::move_partition;
    } else {
      return unsupported_statement(statement_name("ALTER SYSTEM"));
    }
    if (auto s = expect_word("PARTITION"); !s) return s;
    if (peek().t != token::type::string)
      return invalid(peek(), "a quoted partition ('table/index') expected, found " + show(peek()));
    st.partition = next().text;
    if (st.what == ddl_statement::kind::move_partition && accept_word("FROM")) {
      if (peek().t != token::type::string) return invalid(peek(), "a quoted node id expected, found " + show(peek()));
      st.from_node = next().text;
    }
    if (auto s = expect_word("TO"); !s) return s;
    if (peek().t != token::type::string) return invalid(peek(), "a quoted node id expected, found " + show(peek()));
    st.node = next().text;
    out.push_back(std::move(st));
    return status::ok();
  }

  // SHOW TABLEGROUPS | SHOW TABLES [LIKE 'pattern'].
  status show(std::vector<ddl_statement>& out, ddl_statement::kind k) {
    ddl_statement st;
    st.what = k;
    if (accept_word("LIKE")) {
      if (peek().t != token::type::string)
        return invalid(peek(), "a quoted pattern expected after LIKE, found " + show(peek()));
      st.pattern = next().text;
    } else if (at_word("FROM") || at_word("IN") || at_word("WHERE")) {
      return unsupported(peek(), upper(peek().text) + " is not supported here; USE the database first (SHOW " +
                                     std::string(k == ddl_statement::kind::show_tables ? "TABLES" : "TABLEGROUPS") +
                                     " [LIKE 'pattern'])");
    }
    out.push_back(std::move(st));
    return status::ok();
  }

  // ALTER TABLE g$f [SET] kv_attributes [=] '{"HBase": {...}}': the family's TimeToLive and
  // MaxVersions become what the option says (a setting left out: none / all versions).
  status alter_table(std::vector<ddl_statement>& out) {
    ddl_statement st;
    st.what = ddl_statement::kind::alter_table;
    auto n = name("a table name");
    if (!n) return n.error();
    if (auto s = table_name(*n, st.group, st.family); !s) return s;
    accept_word("SET");
    if (!accept_word("KV_ATTRIBUTES"))
      return unsupported_statement("ALTER TABLE ... " +
                                   (peek().t == token::type::ident ? upper(peek().text) : show(peek())));
    accept("=");
    if (peek().t != token::type::string)
      return invalid(peek(), "a quoted JSON string expected after kv_attributes, found " + show(peek()));
    const token attrs = next();
    st.descriptor.name = st.family;
    st.descriptor.max_versions = 0;
    st.descriptor.ttl_seconds = 0;
    if (auto s = apply_kv_attributes(attrs.text, st.descriptor); !s)
      return {s.code(), where(attrs.line, attrs.col) + s.message()};
    out.push_back(std::move(st));
    return status::ok();
  }

  status create_table_group(std::vector<ddl_statement>& out) {
    ddl_statement st;
    st.what = ddl_statement::kind::create_table_group;
    if (auto s = if_not_exists(st); !s) return s;
    auto n = name("a table group name");
    if (!n) return n.error();
    if (n->text.find('$') != std::string::npos) return invalid(*n, "a table group name must not contain '$'");
    auto g = group_name(*n);
    if (!g) return g.error();
    st.group = std::move(*g);
    // OceanBase table group options (SHARDING = 'NONE' ...) do not change cellar's model.
    while (!at_statement_end()) {
      if (accept_word("DEFAULT")) continue;
      if (at_word("SHARDING")) {
        next();
        accept("=");
        if (peek().t != token::type::string && peek().t != token::type::ident)
          return invalid(peek(), "a SHARDING value expected, found " + show(peek()));
        next();
        continue;
      }
      if (at_word("PARTITION"))
        return unsupported(peek(), "table group partitioning is given by its tables' PARTITION BY clause");
      return invalid(peek(), "unexpected " + show(peek()) + " after CREATE TABLEGROUP " + st.group);
    }
    out.push_back(std::move(st));
    return status::ok();
  }

  status drop_table_group(std::vector<ddl_statement>& out) {
    ddl_statement st;
    st.what = ddl_statement::kind::drop_table_group;
    if (auto s = if_exists(st); !s) return s;
    auto n = name("a table group name");
    if (!n) return n.error();
    auto g = group_name(*n);
    if (!g) return g.error();
    st.group = std::move(*g);
    out.push_back(std::move(st));
    return status::ok();
  }

  status drop_table(std::vector<ddl_statement>& out) {
    ddl_statement proto;
    proto.what = ddl_statement::kind::drop_table;
    if (auto s = if_exists(proto); !s) return s;
    std::vector<ddl_statement> drops;
    do {
      auto n = name("a table name");
      if (!n) return n.error();
      ddl_statement st = proto;
      if (auto s = table_name(*n, st.group, st.family); !s) return s;
      drops.push_back(std::move(st));
    } while (accept(","));
    accept_word("RESTRICT") || accept_word("CASCADE");
    for (auto& d : drops) out.push_back(std::move(d));
    return status::ok();
  }

  status create_table(std::vector<ddl_statement>& out, const token& create) {
    ddl_statement st;
    st.what = ddl_statement::kind::create_table;
    if (auto s = if_not_exists(st); !s) return s;
    auto n = name("a table name");
    if (!n) return n.error();
    if (auto s = table_name(*n, st.group, st.family); !s) return s;

    // CREATE TABLE x LIKE y, or CREATE TABLE x (LIKE y).
    const bool paren_like = peek().t == token::type::punct && peek().text == "(" && at_word("LIKE", 1);
    if (at_word("LIKE") || paren_like) {
      if (paren_like) next();
      next();
      auto src = name("the template table's name");
      if (!src) return src.error();
      if (auto s = table_name(*src, st.source_group, st.source_family); !s) return s;
      if (paren_like)
        if (auto s = expect(")"); !s) return s;
      st.what = ddl_statement::kind::create_table_like;
      out.push_back(std::move(st));
      return status::ok();
    }

    const token open = peek();
    if (auto s = expect("("); !s) return s;
    std::vector<column_def> columns;
    std::optional<std::vector<token>> primary_key;
    token pk_at;
    do {
      if (at_word("PRIMARY") || at_word("CONSTRAINT")) {
        pk_at = peek();
        if (accept_word("CONSTRAINT") && !at_word("PRIMARY")) {
          if (auto c = name("a constraint name"); !c) return c.error();
        }
        if (auto s = expect_word("PRIMARY"); !s) return s;
        if (auto s = expect_word("KEY"); !s) return s;
        if (primary_key) return invalid(pk_at, "the table has two primary keys");
        if (auto s = expect("("); !s) return s;
        primary_key.emplace();
        do {
          auto c = name("a key column");
          if (!c) return c.error();
          primary_key->push_back(*c);
        } while (accept(","));
        if (auto s = expect(")"); !s) return s;
        continue;
      }
      for (std::string_view w : {"KEY", "INDEX", "UNIQUE", "FULLTEXT", "SPATIAL", "FOREIGN", "CHECK"})
        if (at_word(w) && peek().t == token::type::ident)
          return unsupported(peek(),
                             "indexes and constraints other than the primary key are not "
                             "supported (OBKV-HBase has no secondary indexes)");
      auto c = column(columns);
      if (!c) return c.error();
      columns.push_back(std::move(*c));
    } while (accept(","));
    if (auto s = expect(")"); !s) return s;

    // Table options, in any order, optionally separated by commas.
    std::optional<token> tablegroup;
    std::optional<token> kv_attributes;
    while (!at_statement_end() && !at_word("PARTITION")) {
      if (accept(",")) continue;
      const token opt = peek();
      if (accept_word("TABLEGROUP")) {
        accept("=");
        auto g = peek();
        if (g.t != token::type::ident && g.t != token::type::quoted_ident && g.t != token::type::string)
          return invalid(g, "a table group name expected after TABLEGROUP, found " + show(g));
        next();
        if (tablegroup) return invalid(opt, "TABLEGROUP is given twice");
        tablegroup = g;
        continue;
      }
      if (accept_word("KV_ATTRIBUTES")) {
        accept("=");
        if (peek().t != token::type::string)
          return invalid(peek(), "a quoted JSON string expected after kv_attributes, found " + show(peek()));
        if (kv_attributes) return invalid(opt, "kv_attributes is given twice");
        kv_attributes = next();
        continue;
      }
      // Options that do not change cellar's model: accepted and ignored.
      accept_word("DEFAULT");
      bool ignored = accept_word("CHARSET") || accept_word("COLLATE") || accept_word("COMMENT") ||
                     accept_word("COMPRESSION") || accept_word("ROW_FORMAT") || accept_word("ENGINE");
      if (!ignored && accept_word("CHARACTER")) {
        if (auto s = expect_word("SET"); !s) return s;
        ignored = true;
      }
      if (ignored) {
        accept("=");
        const token& v = peek();
        if (v.t != token::type::ident && v.t != token::type::string && v.t != token::type::quoted_ident)
          return invalid(v, "a value expected after " + upper(opt.text) + ", found " + show(v));
        next();
        continue;
      }
      if (opt.t == token::type::punct) return invalid(opt, "unexpected '" + opt.text + "' after the column list");
      return unsupported(opt, "table option " + show(opt) + " is not supported");
    }

    partition_clause part;
    if (at_word("PARTITION")) {
      if (auto s = partition(part); !s) return s;
    }
    if (!at_statement_end()) {
      if (at_word("SUBPARTITION"))
        return unsupported(peek(),
                           "two-level partitioning (SUBPARTITION) is not supported; OBKV-HBase "
                           "supports one level only");
      return invalid(peek(), "unexpected " + show(peek()) + " after the table definition");
    }

    if (tablegroup) {
      st.explicit_table_group = true;
      // `db.g$f ... TABLEGROUP = g`: the group of database db.
      if (tablegroup->text != st.group && st.group.substr(st.group.find(':') + 1) != tablegroup->text)
        return invalid(*tablegroup, "TABLEGROUP = " + tablegroup->text + " but the table " + st.group + "$" +
                                        st.family + " belongs to table group '" + st.group +
                                        "' (OBKV-HBase names a family table TableGroupName$FamilyName)");
    }
    st.descriptor.name = st.family;
    if (auto s = check_model(st, create, open, columns, primary_key, pk_at, part); !s) return s;
    if (kv_attributes) {
      if (auto s = apply_kv_attributes(kv_attributes->text, st.descriptor); !s)
        return {s.code(), where(kv_attributes->line, kv_attributes->col) + s.message()};
    }
    out.push_back(std::move(st));
    return status::ok();
  }

  result<column_def> column(const std::vector<column_def>& so_far) {
    column_def c;
    auto n = name("a column name");
    if (!n) return n.error();
    c.name = *n;
    c.key = upper(n->text);
    for (const auto& o : so_far)
      if (o.key == c.key) return invalid(*n, "column " + n->text + " is defined twice");
    const token type = peek();
    if (type.t != token::type::ident) return invalid(type, "a column type expected, found " + show(type));
    next();
    c.type = upper(type.text);
    for (auto& ch : c.type) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
    if (accept("(")) {
      auto len = number("a length");
      if (!len) return len.error();
      c.length = *len;
      if (auto s = expect(")"); !s) return s;
    }
    for (;;) {
      const token at = peek();
      if (accept_word("NOT")) {
        if (auto s = expect_word("NULL"); !s) return s;
        c.not_null = true;
      } else if (accept_word("NULL")) {
      } else if (at_word("GENERATED") || at_word("AS")) {
        if (accept_word("GENERATED")) {
          if (auto s = expect_word("ALWAYS"); !s) return s;
        }
        if (auto s = expect_word("AS"); !s) return s;
        auto g = generated();
        if (!g) return g.error();
        c.generated = std::move(*g);
        accept_word("VIRTUAL") || accept_word("STORED");
      } else if (accept_word("COMMENT")) {
        if (peek().t != token::type::string) return invalid(peek(), "a comment string expected");
        next();
      } else if (at_word("PRIMARY") || at_word("UNIQUE") || at_word("KEY")) {
        return invalid(at, "declare the primary key as PRIMARY KEY(K, Q, T) after the columns");
      } else if (at_word("DEFAULT") || at_word("AUTO_INCREMENT") || at_word("ON") || at_word("COLLATE") ||
                 at_word("CHARACTER") || at_word("CHARSET") || at_word("UNSIGNED")) {
        return unsupported(at, "column attribute " + upper(at.text) + " is not supported in an OBKV-HBase table");
      } else {
        break;
      }
    }
    return c;
  }

  // The parenthesised expression of a generated column.
  result<generated_expr> generated() {
    const token open = peek();
    if (auto s = expect("("); !s) return s;
    std::vector<token> body;
    int depth = 1;
    for (;;) {
      const token& t = peek();
      if (t.t == token::type::end) return invalid(open, "unbalanced '(' in the generated column");
      next();
      if (t.t == token::type::punct && t.text == "(") ++depth;
      if (t.t == token::type::punct && t.text == ")" && --depth == 0) break;
      body.push_back(t);
    }
    generated_expr g;
    for (const auto& t : body) {
      if (!g.text.empty() && t.text != "(" && t.text != ")" && t.text != "," && g.text.back() != '(') g.text += ' ';
      g.text += t.t == token::type::string ? "'" + t.text + "'" : t.text;
    }
    auto punct = [&](std::size_t i, std::string_view p) {
      return body[i].t == token::type::punct && body[i].text == p;
    };
    auto ident = [&](std::size_t i) {
      return body[i].t == token::type::ident || body[i].t == token::type::quoted_ident;
    };
    if (body.size() == 8 && (is_word(body[0], "substring") || is_word(body[0], "substr")) && punct(1, "(") &&
        ident(2) && punct(3, ",") && body[4].t == token::type::number && punct(5, ",") &&
        body[6].t == token::type::number && punct(7, ")")) {
      g.t = generated_expr::type::substring;
      g.column = upper(body[2].text);
      std::from_chars(body[4].text.data(), body[4].text.data() + body[4].text.size(), g.start);
      std::from_chars(body[6].text.data(), body[6].text.data() + body[6].text.size(), g.length);
    } else if (body.size() == 4 && is_word(body[0], "abs") && punct(1, "(") && ident(2) && punct(3, ")")) {
      g.t = generated_expr::type::abs;
      g.column = upper(body[2].text);
    }
    return g;
  }

  status partition(partition_clause& p) {
    p.at = peek();
    next();  // PARTITION
    if (auto s = expect_word("BY"); !s) return s;
    const token method = peek();
    if (accept_word("KEY")) {
      p.t = partition_clause::type::key;
      if (at_word("ALGORITHM")) return unsupported(peek(), "KEY ALGORITHM is not supported");
      if (auto s = expect("("); !s) return s;
      auto c = name("a partition column");
      if (!c) return c.error();
      p.column_tok = *c;
      p.column = upper(c->text);
      if (peek().t == token::type::punct && peek().text == ",")
        return unsupported(peek(), "KEY partitioning on several columns is not supported; use KEY(K)");
      if (auto s = expect(")"); !s) return s;
      if (accept_word("PARTITIONS")) {
        const token at = peek();
        auto n = number("a partition count");
        if (!n) return n.error();
        if (*n == 0) return invalid(at, "PARTITIONS must be at least 1");
        if (*n > max_partitions)
          return invalid(at, "PARTITIONS " + std::to_string(*n) + " is above cellar's limit of " +
                                 std::to_string(max_partitions));
        p.partitions = *n;
      }
    } else if (accept_word("RANGE")) {
      p.t = partition_clause::type::range;
      if (!accept_word("COLUMNS")) return invalid(peek(), "partition a varbinary row key with RANGE COLUMNS(K)");
      if (auto s = expect("("); !s) return s;
      auto c = name("a partition column");
      if (!c) return c.error();
      p.column_tok = *c;
      p.column = upper(c->text);
      if (peek().t == token::type::punct && peek().text == ",")
        return unsupported(peek(), "RANGE COLUMNS on several columns is not supported; use RANGE COLUMNS(K)");
      if (auto s = expect(")"); !s) return s;
      if (at_word("SUBPARTITION")) return subpartition_error();
      if (auto s = expect("("); !s) return s;
      do {
        partition_clause::range_part part;
        if (auto s = expect_word("PARTITION"); !s) return s;
        auto pn = name("a partition name");
        if (!pn) return pn.error();
        part.name = *pn;
        for (const auto& o : p.parts)
          if (ascii_iequal(o.name.text, pn->text)) return invalid(*pn, "partition " + pn->text + " is defined twice");
        if (auto s = expect_word("VALUES"); !s) return s;
        if (auto s = expect_word("LESS"); !s) return s;
        if (auto s = expect_word("THAN"); !s) return s;
        const bool paren = accept("(");
        if (accept_word("MAXVALUE")) {
        } else if (peek().t == token::type::string) {
          part.bound = next().text;
        } else {
          return invalid(peek(), "a quoted row key or MAXVALUE expected as the bound, found " + show(peek()));
        }
        if (paren) {
          if (peek().t == token::type::punct && peek().text == ",")
            return unsupported(peek(), "a range bound holds one value (RANGE COLUMNS(K))");
          if (auto s = expect(")"); !s) return s;
        }
        if (at_word("SUBPARTITION") || (peek().t == token::type::punct && peek().text == "("))
          return subpartition_error();
        p.parts.push_back(std::move(part));
      } while (accept(","));
      if (auto s = expect(")"); !s) return s;
    } else if (at_word("HASH") || at_word("LIST") || at_word("LINEAR")) {
      return unsupported(method, "PARTITION BY " + upper(method.text) +
                                     " is not supported; use KEY(K), KEY(<prefix column>) or RANGE COLUMNS(K)");
    } else {
      return invalid(method, "KEY or RANGE COLUMNS expected after PARTITION BY, found " + show(method));
    }
    if (at_word("SUBPARTITION")) return subpartition_error();
    return status::ok();
  }
  status subpartition_error() {
    return unsupported(peek(),
                       "two-level partitioning (SUBPARTITION) is not supported; OBKV-HBase supports one "
                       "level only");
  }

  // Checks the columns, key and partitioning against the OBKV-HBase model and fills the
  // statement's descriptor and partitioning.
  status check_model(ddl_statement& st, const token& create, const token& open, const std::vector<column_def>& cols,
                     const std::optional<std::vector<token>>& pk, const token& pk_at, const partition_clause& part) {
    auto find = [&](std::string_view key) -> const column_def* {
      for (const auto& c : cols)
        if (c.key == key) return &c;
      return nullptr;
    };
    auto is_int = [](const column_def& c) { return c.type == "bigint"; };
    auto is_varbinary = [](const column_def& c, std::uint64_t max) {
      return c.type == "varbinary" && c.length && *c.length >= 1 && *c.length <= max;
    };
    // Generated columns other than the two the model knows are refused first: they are
    // valid OceanBase that cellar does not do.
    for (const auto& c : cols)
      if (c.generated && c.generated->t == generated_expr::type::other)
        return unsupported(c.name, "generated column " + c.name.text + " AS (" + c.generated->text +
                                       "): only substring(K, 1, n) prefix columns (and ABS(T) in a time-series "
                                       "table) are supported");

    const bool time_series = find("S") != nullptr || (find("V") && find("V")->type == "json");
    const std::vector<std::string_view> model = time_series ? std::vector<std::string_view>{"K", "T", "S", "V", "G"}
                                                            : std::vector<std::string_view>{"K", "Q", "T", "V"};
    const std::string model_text = time_series ? "K, T, S, V json, G (time series)" : "K, Q, T, V";
    for (auto m : model)
      if (!find(m))
        return invalid(open, "column " + std::string(m) + " is missing: an OBKV-HBase table has exactly the columns " +
                                 model_text + " (names cannot be changed)");

    const column_def* prefix = nullptr;
    for (const auto& c : cols) {
      if (std::find(model.begin(), model.end(), c.key) != model.end()) continue;
      if (!time_series && c.generated && c.generated->t == generated_expr::type::substring && !prefix) {
        prefix = &c;
        continue;
      }
      return invalid(c.name, "column " + c.name.text + " is not part of the OBKV-HBase model: columns are " +
                                 model_text +
                                 (time_series ? "" : ", plus one generated substring(K, 1, n) partition column"));
    }

    // Types.
    const column_def& k = *find("K");
    if (k.generated) return invalid(k.name, "K must not be a generated column");
    if (!is_varbinary(k, max_row_key_bytes)) return invalid(k.name, "K must be varbinary(n) with n <= 1024");
    const column_def& t = *find("T");
    if (t.generated) return invalid(t.name, "T must not be a generated column");
    if (!is_int(t)) return invalid(t.name, "T must be bigint");
    const column_def& v = *find("V");
    if (v.generated) return invalid(v.name, "V must not be a generated column");
    family_descriptor& f = st.descriptor;
    if (time_series) {
      f.kind = family_kind::time_series;
      const column_def& s = *find("S");
      if (s.generated || !is_int(s)) return invalid(s.name, "S must be a bigint column");
      if (v.type != "json") return invalid(v.name, "V of a time-series table must be json");
      const column_def& g = *find("G");
      if (!is_int(g)) return invalid(g.name, "G must be bigint");
      if (!g.generated || g.generated->t != generated_expr::type::abs || g.generated->column != "T")
        return invalid(g.name, "G must be GENERATED ALWAYS AS (ABS(T))");
    } else {
      const column_def& q = *find("Q");
      if (q.generated) return invalid(q.name, "Q must not be a generated column");
      if (!is_varbinary(q, max_qualifier_bytes)) return invalid(q.name, "Q must be varbinary(n) with n <= 256");
      if (v.type == "longblob" && !v.length) {
        f.max_value_bytes = longblob_value_bytes;
      } else if (v.type == "varbinary" && v.length && *v.length >= 1 && *v.length <= default_value_bytes) {
        f.max_value_bytes = *v.length;
      } else {
        return invalid(v.name, "V must be varbinary(n) with 1 <= n <= 1048576, or longblob");
      }
      if (prefix) {
        const generated_expr& g = *prefix->generated;
        if (g.column != "K" || g.start != 1)
          return unsupported(prefix->name, "generated column " + prefix->name.text +
                                               ": only row-key prefixes substring(K, 1, n) are supported");
        if (g.length == 0 || g.length > max_row_key_bytes)
          return invalid(prefix->name, "the prefix length of substring(K, 1, n) must be 1 to 1024");
        if (prefix->type != "varbinary")
          return invalid(prefix->name, "the prefix column " + prefix->name.text + " must be varbinary");
      }
    }

    // Primary key.
    const std::vector<std::string_view> want_pk =
        time_series ? std::vector<std::string_view>{"K", "T", "S"} : std::vector<std::string_view>{"K", "Q", "T"};
    const std::string want_pk_text = time_series ? "PRIMARY KEY(K, T, S)" : "PRIMARY KEY(K, Q, T)";
    if (!pk) return invalid(create, "the primary key is missing: an OBKV-HBase table needs " + want_pk_text);
    bool pk_ok = pk->size() == want_pk.size();
    for (std::size_t i = 0; pk_ok && i < pk->size(); ++i) pk_ok = upper((*pk)[i].text) == want_pk[i];
    if (!pk_ok) return invalid(pk_at, "the primary key must be " + want_pk_text + ", in that order");

    // Partitioning.
    switch (part.t) {
      case partition_clause::type::none:
        if (prefix)
          return invalid(prefix->name, "generated column " + prefix->name.text +
                                           " is only allowed as the partition key: add PARTITION BY KEY(" +
                                           prefix->name.text + ") PARTITIONS n");
        st.partitioning = partition_spec::single();
        break;
      case partition_clause::type::key:
        if (time_series) {
          if (part.column != "K")
            return unsupported(part.column_tok, "a time-series table can only be partitioned by KEY(K)");
          st.partitioning = partition_spec::hash(static_cast<std::uint32_t>(part.partitions));
        } else if (part.column == "K") {
          if (prefix)
            return invalid(prefix->name,
                           "generated column " + prefix->name.text +
                               " is only allowed as the partition key, but the table is partitioned by KEY(K)");
          st.partitioning = partition_spec::hash(static_cast<std::uint32_t>(part.partitions));
        } else if (prefix && part.column == prefix->key) {
          st.partitioning = partition_spec::hash_prefix(static_cast<std::uint32_t>(part.partitions),
                                                        static_cast<std::uint32_t>(prefix->generated->length));
        } else {
          return invalid(part.column_tok, "the partition key must be K or a generated substring(K, 1, n) column, not " +
                                              part.column_tok.text);
        }
        break;
      case partition_clause::type::range: {
        if (time_series) return unsupported(part.at, "a time-series table can only be partitioned by KEY(K)");
        if (part.column != "K")
          return invalid(part.column_tok, "RANGE COLUMNS partitions on the row key: RANGE COLUMNS(K)");
        if (prefix)
          return invalid(prefix->name,
                         "generated column " + prefix->name.text +
                             " is only allowed as the partition key, but the table is partitioned by RANGE COLUMNS(K)");
        std::vector<std::string> bounds;
        for (std::size_t i = 0; i < part.parts.size(); ++i) {
          const auto& pp = part.parts[i];
          const bool last = i + 1 == part.parts.size();
          if (!pp.bound) {
            if (!last)
              return invalid(pp.name, "partition " + pp.name.text + " is LESS THAN MAXVALUE but is not the last one");
            continue;
          }
          if (last)
            return invalid(pp.name,
                           "the last partition must be VALUES LESS THAN MAXVALUE, so that every row key "
                           "has a partition");
          if (pp.bound->empty()) return invalid(pp.name, "partition " + pp.name.text + " has an empty bound");
          if (!bounds.empty() && !(bounds.back() < *pp.bound))
            return invalid(pp.name, "range bounds must be strictly increasing: the bound of partition " + pp.name.text +
                                        " is not above the previous one");
          bounds.push_back(*pp.bound);
        }
        if (bounds.size() + 1 > max_partitions) return invalid(part.at, "too many range partitions");
        st.partitioning = partition_spec::range_bounds(std::move(bounds));
        break;
      }
    }
    return status::ok();
  }

  std::vector<token> tk_;
  std::size_t pos_ = 0;
};

}  // namespace

result<std::vector<ddl_statement>> parse_ddl(std::string_view sql) {
  auto tokens = ddl_detail::lex(sql);
  if (!tokens) return tokens.error();
  return parser(std::move(*tokens)).statements();
}

}  // namespace cellar
