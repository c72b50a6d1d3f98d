#pragma once
// An orbit camera around a target point, and the rays and planes the mouse needs. Pixel
// coordinates have their origin at the top left of the viewport, as windows report them.
#include <glm/glm.hpp>

namespace clothlab {

struct Ray {
  glm::dvec3 origin{0};
  glm::dvec3 direction{0, 0, -1};  // unit
};

struct Camera {
  glm::dvec3 target{0, 0.5, 0};
  double yaw = 0.5;        // about +y [rad]
  double pitch = 0.35;     // above the horizon [rad], (-1.5, 1.5)
  double distance = 3.0;   // eye to target [m]
  double fovY = 0.7854;    // vertical field of view [rad]
  // Horizontal lens shift in viewport fractions: the target appears at (0.5 + shift) of the width
  // (the viewer moves it right of its side panel). Projection, rays and picking all include it.
  double shift = 0;

  glm::dvec3 eye() const;
  glm::dvec3 forward() const;  // unit, eye -> target
  glm::mat4 view() const;
  glm::mat4 projection(double aspect) const;
  glm::mat4 viewProjection(int width, int height) const;

  void orbit(double dxPixels, double dyPixels);
  void pan(double dxPixels, double dyPixels, int viewportHeight);
  void zoom(double wheelSteps);  // positive: closer
  // Frames the box [lo, hi] (from a little above), keeping the current direction if `keepAngles`,
  // in a viewport of width/height `aspect` (narrow viewports need the camera further away).
  void fit(const glm::dvec3& lo, const glm::dvec3& hi, bool keepAngles = false, double aspect = 1.0);

  Ray ray(double x, double y, int width, int height) const;
  // Where the ray through pixel (x, y) meets the plane facing the camera through `through`.
  glm::dvec3 onViewPlane(double x, double y, int width, int height, const glm::dvec3& through) const;
  // Pixel position of a world point (and whether it is in front of the camera).
  glm::dvec2 project(const glm::dvec3& p, int width, int height, bool* inFront = nullptr) const;
};

}  // namespace clothlab
