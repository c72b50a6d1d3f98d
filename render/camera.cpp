#include "render/camera.h"

#include <algorithm>
#include <cmath>
#include <glm/gtc/matrix_transform.hpp>

namespace clothlab {

glm::dvec3 Camera::forward() const {
  return -glm::dvec3(std::cos(pitch) * std::sin(yaw), std::sin(pitch), std::cos(pitch) * std::cos(yaw));
}

glm::dvec3 Camera::eye() const { return target - distance * forward(); }

glm::mat4 Camera::view() const { return glm::lookAt(eye(), target, glm::dvec3(0, 1, 0)); }

glm::mat4 Camera::projection(double aspect) const {
  const double nearPlane = std::max(1e-3, distance * 0.01);
  const glm::dmat4 lens = glm::translate(glm::dmat4(1), glm::dvec3(2.0 * shift, 0, 0));
  return glm::mat4(lens * glm::perspective(fovY, std::max(aspect, 1e-3), nearPlane, distance * 100.0 + 100.0));
}

glm::mat4 Camera::viewProjection(int width, int height) const {
  return projection(double(width) / std::max(height, 1)) * view();
}

void Camera::orbit(double dx, double dy) {
  yaw -= dx * 0.008;
  pitch = std::clamp(pitch + dy * 0.008, -1.5, 1.5);
}

void Camera::pan(double dx, double dy, int viewportHeight) {
  const double metresPerPixel = 2.0 * distance * std::tan(fovY / 2) / std::max(viewportHeight, 1);
  const glm::dvec3 f = forward();
  const glm::dvec3 right = glm::normalize(glm::cross(f, glm::dvec3(0, 1, 0)));
  const glm::dvec3 up = glm::cross(right, f);
  target += (-dx * right + dy * up) * metresPerPixel;
}

void Camera::zoom(double steps) { distance = std::clamp(distance * std::pow(0.88, steps), 0.02, 500.0); }

void Camera::fit(const glm::dvec3& lo, const glm::dvec3& hi, bool keepAngles, double aspect) {
  target = 0.5 * (lo + hi);
  const double radius = std::max(0.5 * glm::length(hi - lo), 0.05);
  if (!keepAngles) {
    yaw = 0.55;
    pitch = 0.38;
  }
  // The narrower of the two fields of view must hold the bounding sphere.
  const double fovX = 2 * std::atan(std::max(aspect, 0.05) * std::tan(fovY / 2));
  distance = radius / std::sin(std::min(fovY, fovX) / 2) * 1.05;
}

Ray Camera::ray(double x, double y, int width, int height) const {
  const glm::dmat4 inverse = glm::inverse(glm::dmat4(viewProjection(width, height)));
  const double nx = 2.0 * x / std::max(width, 1) - 1.0, ny = 1.0 - 2.0 * y / std::max(height, 1);
  glm::dvec4 a = inverse * glm::dvec4(nx, ny, -1, 1), b = inverse * glm::dvec4(nx, ny, 1, 1);
  a /= a.w;
  b /= b.w;
  return {glm::dvec3(a), glm::normalize(glm::dvec3(b - a))};
}

glm::dvec3 Camera::onViewPlane(double x, double y, int width, int height, const glm::dvec3& through) const {
  const Ray r = ray(x, y, width, height);
  const glm::dvec3 n = forward();
  const double denom = glm::dot(r.direction, n);
  if (std::abs(denom) < 1e-12) return through;
  return r.origin + r.direction * (glm::dot(through - r.origin, n) / denom);
}

glm::dvec2 Camera::project(const glm::dvec3& p, int width, int height, bool* inFront) const {
  const glm::dvec4 clip = glm::dmat4(viewProjection(width, height)) * glm::dvec4(p, 1);
  if (inFront) *inFront = clip.w > 0;
  const double w = std::abs(clip.w) < 1e-12 ? 1e-12 : clip.w;
  return {(clip.x / w * 0.5 + 0.5) * width, (0.5 - clip.y / w * 0.5) * height};
}

}  // namespace clothlab
