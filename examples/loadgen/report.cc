#include "report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace loadgen {

void run_stats::merge(run_stats& o) {
  for (std::size_t i = 0; i < op_kinds; ++i) ops[i].merge(o.ops[i]);
  total.merge(o.total);
  if (seconds.size() < o.seconds.size()) seconds.resize(o.seconds.size());
  for (std::size_t s = 0; s < o.seconds.size(); ++s)
    for (std::size_t i = 0; i < op_kinds; ++i)
      if (o.seconds[s].ops[i]) seconds[s].at(static_cast<op_kind>(i)).merge(*o.seconds[s].ops[i]);
}

namespace {
double us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }
}  // namespace

nlohmann::json summary_json(const histogram& h) {
  return {{"count", h.count()},
          {"avg_us", h.mean() / 1000.0},
          {"min_us", us(h.min())},
          {"p50_us", us(h.percentile(50))},
          {"p95_us", us(h.percentile(95))},
          {"p99_us", us(h.percentile(99))},
          {"p999_us", us(h.percentile(99.9))},
          {"max_us", us(h.max())}};
}

nlohmann::json spectrum_json(const histogram& h) {
  // Points at 1 - 10^(-k/8): dense towards the tail, like HdrHistogram's percentile output.
  nlohmann::json a = nlohmann::json::array();
  if (h.count() == 0) return a;
  for (int k = 0; k <= 48; ++k) {
    const double p = 100.0 * (1.0 - std::pow(10.0, -k / 8.0));
    if (k > 0 && std::pow(10.0, k / 8.0) > static_cast<double>(h.count()) * 1.0001) break;
    a.push_back({p, us(h.percentile(p))});
  }
  a.push_back({100.0, us(h.max())});
  return a;
}

// ---- SVG -----------------------------------------------------------------------------------

namespace {

const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                         "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else if (c == '"')
      o += "&quot;";
    else
      o += c;
  }
  return o;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string us_label(double v) {
  char b[32];
  if (v >= 1e6)
    std::snprintf(b, sizeof b, "%gs", v / 1e6);
  else if (v >= 1e3)
    std::snprintf(b, sizeof b, "%gms", v / 1e3);
  else
    std::snprintf(b, sizeof b, "%gµs", v);
  return b;
}

struct line {
  std::string label;
  std::string color;
  bool dashed = false;
  std::vector<std::pair<double, double>> pts;  // data coordinates (x already transformed)
};

struct axis {
  double lo, hi;
  bool log;
  double map(double v, double a, double b) const {
    double t = log ? (std::log10(std::max(v, 1e-9)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                   : (v - lo) / (hi - lo);
    return a + (b - a) * t;
  }
};

std::string render(const std::string& title, const std::string& xlabel, const std::string& ylabel,
                   const std::vector<line>& lines, axis xa, axis ya,
                   const std::vector<std::pair<double, std::string>>& xticks,
                   const std::vector<std::pair<double, std::string>>& yticks) {
  const double W = 900, H = 520, L = 80, R = 230, T = 50, B = 60;
  const double x0 = L, x1 = W - R, y0 = H - B, y1 = T;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 " << W
    << ' ' << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << W / 2 << "\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">" << esc(title) << "</text>\n";
  for (auto& [v, s] : xticks) {
    const double x = xa.map(v, x0, x1);
    o << "<line x1=\"" << num(x) << "\" y1=\"" << y0 << "\" x2=\"" << num(x) << "\" y2=\"" << y1
      << "\" stroke=\"#e0e0e0\"/>\n";
    o << "<text x=\"" << num(x) << "\" y=\"" << y0 + 18 << "\" text-anchor=\"middle\">" << esc(s) << "</text>\n";
  }
  for (auto& [v, s] : yticks) {
    const double y = ya.map(v, y0, y1);
    o << "<line x1=\"" << x0 << "\" y1=\"" << num(y) << "\" x2=\"" << x1 << "\" y2=\"" << num(y)
      << "\" stroke=\"#e0e0e0\"/>\n";
    o << "<text x=\"" << x0 - 6 << "\" y=\"" << num(y + 4) << "\" text-anchor=\"end\">" << esc(s) << "</text>\n";
  }
  o << "<rect x=\"" << x0 << "\" y=\"" << y1 << "\" width=\"" << x1 - x0 << "\" height=\"" << y0 - y1
    << "\" fill=\"none\" stroke=\"black\"/>\n";
  o << "<text x=\"" << (x0 + x1) / 2 << "\" y=\"" << H - 15 << "\" text-anchor=\"middle\">" << esc(xlabel)
    << "</text>\n";
  o << "<text transform=\"translate(20," << (y0 + y1) / 2 << ") rotate(-90)\" text-anchor=\"middle\">" << esc(ylabel)
    << "</text>\n";
  double ly = y1 + 10;
  for (auto& l : lines) {
    if (l.pts.empty()) continue;
    o << "<polyline fill=\"none\" stroke=\"" << l.color << "\" stroke-width=\"1.8\""
      << (l.dashed ? " stroke-dasharray=\"6,4\"" : "") << " points=\"";
    for (auto& [x, y] : l.pts)
      o << num(xa.map(std::clamp(x, xa.lo, xa.hi), x0, x1)) << ',' << num(ya.map(std::clamp(y, ya.lo, ya.hi), y0, y1))
        << ' ';
    o << "\"/>\n";
    o << "<line x1=\"" << x1 + 12 << "\" y1=\"" << ly << "\" x2=\"" << x1 + 40 << "\" y2=\"" << ly << "\" stroke=\""
      << l.color << "\" stroke-width=\"2\"" << (l.dashed ? " stroke-dasharray=\"6,4\"" : "") << "/>\n";
    o << "<text x=\"" << x1 + 46 << "\" y=\"" << ly + 4 << "\">" << esc(l.label) << "</text>\n";
    ly += 18;
  }
  o << "</svg>\n";
  return o.str();
}

std::vector<std::pair<double, std::string>> log_ticks(double lo, double hi) {
  std::vector<std::pair<double, std::string>> t;
  for (double v = std::pow(10.0, std::floor(std::log10(lo))); v <= hi * 1.0001; v *= 10)
    if (v >= lo * 0.9999) t.emplace_back(v, us_label(v));
  return t;
}

}  // namespace

std::string svg_plot(const std::string& kind, const std::string& title,
                     const std::vector<std::pair<std::string, nlohmann::json>>& series) {
  std::vector<line> lines;
  double ymin = 1e18, ymax = 0, xmax = 1;
  std::size_t color = 0;
  for (auto& [label, j] : series) {
    for (auto& [op, st] : j.at("operations").items()) {
      const std::string c = palette[color++ % 10];
      if (kind == "cdf") {
        for (const char* which : {"service", "intended"}) {
          if (!st.contains(which) || st[which].at("cdf").empty()) continue;
          line l{label + " " + op + (std::string(which) == "intended" ? " (from intended)" : ""),
                 c,
                 std::string(which) == "intended",
                 {}};
          for (auto& p : st[which]["cdf"]) {
            const double pct = p[0].get<double>(), v = p[1].get<double>();
            const double x = 1.0 / std::max(1e-7, 1.0 - pct / 100.0);
            l.pts.emplace_back(x, v);
            ymin = std::min(ymin, v);
            ymax = std::max(ymax, v);
            xmax = std::max(xmax, x);
          }
          lines.push_back(std::move(l));
        }
      } else {
        line p50{label + " " + op + " p50", c, false, {}}, p99{label + " " + op + " p99", c, true, {}};
        for (auto& s : j.at("timeline")) {
          if (!s.at("ops").contains(op)) continue;
          const auto& o = s["ops"][op];
          const double t = s.at("t").get<double>();
          p50.pts.emplace_back(t, o.at("p50_us").get<double>());
          p99.pts.emplace_back(t, o.at("p99_us").get<double>());
          ymin = std::min(ymin, o["p50_us"].get<double>());
          ymax = std::max(ymax, o["p99_us"].get<double>());
          xmax = std::max(xmax, t);
        }
        lines.push_back(std::move(p50));
        lines.push_back(std::move(p99));
      }
    }
  }
  if (ymax <= 0) ymin = 1, ymax = 10;
  ymin = std::pow(10.0, std::floor(std::log10(std::max(ymin, 0.1))));
  ymax = std::pow(10.0, std::ceil(std::log10(std::max(ymax, ymin * 10))));
  axis ya{ymin, ymax, true};
  if (kind == "cdf") {
    xmax = std::max(100.0, std::pow(10.0, std::ceil(std::log10(xmax))));
    std::vector<std::pair<double, std::string>> xt;
    const char* names[] = {"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"};
    for (int k = 0; k < 7 && std::pow(10.0, k) <= xmax; ++k) xt.emplace_back(std::pow(10.0, k), names[k]);
    return render(title, "percentile", "latency", lines, {1, xmax, true}, ya, xt, log_ticks(ymin, ymax));
  }
  std::vector<std::pair<double, std::string>> xt;
  const double step = xmax <= 20 ? 2 : xmax <= 60 ? 5 : xmax <= 300 ? 30 : 60;
  for (double t = 0; t <= xmax; t += step) xt.emplace_back(t, num(t).substr(0, num(t).find('.')) + "s");
  return render(title, "time since start", "latency (p50 solid, p99 dashed)", lines, {0, std::max(1.0, xmax), false},
                ya, xt, log_ticks(ymin, ymax));
}

}  // namespace loadgen
