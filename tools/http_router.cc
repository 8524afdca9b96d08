#include "tools/http_router.h"

#include <algorithm>
#include <utility>

namespace scopeflow {

void HttpRouter::Add(std::string method, std::string pattern,
                     HandlerThread thread, HttpHandler handler,
                     int model_group) {
  HttpRoute route;
  route.method = std::move(method);
  route.regex = std::regex(pattern, std::regex::ECMAScript);
  route.pattern = std::move(pattern);
  route.thread = thread;
  route.model_group = model_group;
  route.handler = std::move(handler);
  routes_.push_back(std::move(route));
}

HttpRouter::Match HttpRouter::Find(const std::string& method,
                                   const std::string& path) const {
  Match match;
  std::smatch groups;
  for (const HttpRoute& route : routes_) {
    if (!std::regex_match(path, groups, route.regex)) continue;
    if (!route.method.empty() && route.method != method) {
      if (std::find(match.allowed.begin(), match.allowed.end(),
                    route.method) == match.allowed.end()) {
        match.allowed.push_back(route.method);
      }
      continue;
    }
    match.route = &route;
    match.allowed.clear();
    for (const auto& group : groups) match.matches.push_back(group.str());
    return match;
  }
  return match;
}

}  // namespace scopeflow
